package dev.ratelimit.redis.testing;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The worker of the multi-process test: connects, warms up, prints {@value #READY}, waits for
 * {@value #GO} on standard input, then checks one user from several threads released together and
 * prints {@code RESULT <allowed> <attempts>}.
 */
public final class Hammer {

    /** Printed once connected. */
    public static final String READY = "READY";

    /** Read before hammering. */
    public static final String GO = "GO";

    /** Starts the result line. */
    public static final String RESULT = "RESULT";

    private Hammer() {}

    /**
     * Runs the worker; args: host, port, user, limit, threads, checks per thread.
     *
     * @param args the arguments
     * @param store the store under test, connected to host and port
     * @throws Exception if anything fails
     */
    public static void run(String[] args, WindowStore store) throws Exception {
        String user = args[2];
        int limit = Integer.parseInt(args[3]);
        int threads = Integer.parseInt(args[4]);
        int perThread = Integer.parseInt(args[5]);
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).failOpen(false).build();
        warmUp(limiter, user);
        System.out.println(READY);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        if (!GO.equals(in.readLine())) {
            throw new IllegalStateException("expected " + GO);
        }
        int allowed = allowedOf(limiter, user, limit, threads, perThread, () -> {});
        System.out.println(RESULT + " " + allowed + " " + threads * perThread);
        System.out.flush();
    }

    /**
     * Releases {@code threads} threads together, each making {@code perThread} checks of one user
     * against one minute window, and counts the allowed ones.
     *
     * @param limiter the limiter under test
     * @param user the user every check charges
     * @param limit the per-minute limit
     * @param threads how many threads race
     * @param perThread checks per thread
     * @param beforeRelease run once every thread is submitted, just before they are released
     * @return the number of allowed checks
     * @throws Exception if a check fails or the race does not finish within a minute
     */
    public static int allowedOf(
            RateLimiter limiter, String user, int limit, int threads, int perThread, Runnable beforeRelease)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    start.await();
                    int allowed = 0;
                    for (int i = 0; i < perThread; i++) {
                        if (limiter.check(user, limit, Duration.ofMinutes(1)).allowed()) {
                            allowed++;
                        }
                    }
                    return allowed;
                }));
            }
            beforeRelease.run();
            start.countDown();
            int allowed = 0;
            for (Future<Integer> result : results) {
                allowed += result.get(60, TimeUnit.SECONDS);
            }
            return allowed;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Makes one check succeed before reporting ready: on a loaded machine the store's first
     * connection can take longer than its connect timeout, and the race must start connected.
     */
    private static void warmUp(RateLimiter limiter, String user) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                limiter.check(user + "-warm-up", 1_000, Duration.ofSeconds(1));
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }
}
