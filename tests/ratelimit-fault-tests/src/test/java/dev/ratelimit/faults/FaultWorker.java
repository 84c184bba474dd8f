package dev.ratelimit.faults;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * One limiter instance of the multi-process fault: runs {@link Load} against a shared Redis until
 * told to stop, then prints how many non-degraded admissions each user got.
 *
 * <p>Protocol: prints {@value #READY} once connected; reads {@value #STOP}; prints {@code RESULT
 * <degraded> <count of user 0> <count of user 1> ...}.
 */
public final class FaultWorker {

    static final String READY = "READY";
    static final String STOP = "STOP";
    static final String RESULT = "RESULT";

    private FaultWorker() {}

    /**
     * Runs the worker.
     *
     * @param args driver ({@code LETTUCE} or {@code JEDIS}), port, user prefix, users, limit
     * @throws Exception if anything fails
     */
    public static void main(String[] args) throws Exception {
        Driver driver = Driver.valueOf(args[0]);
        int port = Integer.parseInt(args[1]);
        String prefix = args[2];
        int users = Integer.parseInt(args[3]);
        long limit = Long.parseLong(args[4]);
        try (CloseableWindowStore store = driver.standalone(port, null, null, Driver.TIMEOUT)) {
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
            Load load = new Load(limiter, prefix, users, limit);
            load.start(4, 16, 2_000);
            Thread.sleep(1_000);
            System.out.println(READY);
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!STOP.equals(in.readLine())) {
                throw new IllegalStateException("expected " + STOP);
            }
            load.stop();
            StringBuilder result = new StringBuilder(RESULT).append(' ').append(load.degraded());
            for (long count : load.admittedPerUser()) {
                result.append(' ').append(count);
            }
            System.out.println(result);
            System.out.flush();
        }
    }
}
