package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * The runaway client: 8 threads checking one key as fast as they can, far above its limit, with the
 * limiter's local rejection cache on and off. Redis calls are counted from {@code INFO commandstats}
 * ({@code evalsha} and {@code eval} calls) over the measured seconds; calls per rejected decision
 * are the calls left after one per allowed decision, divided by the rejected decisions.
 *
 * <p>The key's limit is set from a calibration without the cache: a 1-second window whose limit is
 * one fiftieth of the rate the 8 threads reach, so without the cache the client runs at 50× its
 * limit (with the cache it runs faster still).
 */
final class RunawayClient {

    static final int THREADS = 8;
    static final int MULTIPLE = 50;

    /** One measured configuration. */
    record Result(String cache, long limitPerSecond, double seconds, long allowed, long rejected, long redisCalls) {

        double rejectedPerSecond() {
            return rejected / seconds;
        }

        double offeredMultiple() {
            return (allowed + rejected) / seconds / limitPerSecond;
        }

        double callsPerRejected() {
            return rejected == 0 ? Double.NaN : Math.max(0, redisCalls - allowed) / (double) rejected;
        }

        double allCallsPerRejected() {
            return rejected == 0 ? Double.NaN : redisCalls / (double) rejected;
        }
    }

    private RunawayClient() {}

    static List<Result> measure(RedisServer redis, Duration duration) throws InterruptedException {
        Result calibration = run(redis, false, 1, Duration.ofSeconds(2));
        long limit = Math.max(1, Math.round(calibration.rejectedPerSecond() / MULTIPLE));
        BenchmarkRunner.log(String.format(
                Locale.ROOT,
                "  calibration: %,.0f rejected/s without the cache; limit %d per second",
                calibration.rejectedPerSecond(),
                limit));
        Result off = progress(run(redis, false, limit, duration));
        Result on = progress(run(redis, true, limit, duration));
        return List.of(off, on);
    }

    private static Result progress(Result result) {
        BenchmarkRunner.log(String.format(
                Locale.ROOT,
                "  cache %s: %,.0f rejected/s, %d allowed, %.1fx the limit, %.5f Redis calls per rejected decision",
                result.cache(),
                result.rejectedPerSecond(),
                result.allowed(),
                result.offeredMultiple(),
                result.callsPerRejected()));
        return result;
    }

    private static Result run(RedisServer redis, boolean cache, long limit, Duration duration)
            throws InterruptedException {
        redis.call("FLUSHALL");
        LettuceStore lettuce = LettuceStore.open(redis.uri(), LettuceStore.PATIENT_CONNECT);
        try {
            RateLimiter limiter = lettuce.failClosedLimiter()
                    .name("runaway")
                    .rejectionCache(cache)
                    .build();
            List<Window> windows = List.of(new Window("second", limit, Duration.ofSeconds(1)));
            limiter.check("warm-up", windows);
            LongAdder allowed = new LongAdder();
            LongAdder rejected = new LongAdder();
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicReference<RuntimeException> failure = new AtomicReference<>();
            Thread[] threads = new Thread[THREADS];
            for (int t = 0; t < THREADS; t++) {
                threads[t] = new Thread(
                        () -> {
                            try {
                                while (running.get()) {
                                    Decision decision = limiter.check("runaway", windows);
                                    (decision.allowed() ? allowed : rejected).increment();
                                }
                            } catch (RuntimeException e) {
                                failure.set(e);
                            }
                        },
                        "runaway-" + t);
            }
            redis.call("CONFIG", "RESETSTAT");
            long start = System.nanoTime();
            for (Thread thread : threads) {
                thread.start();
            }
            Thread.sleep(duration.toMillis());
            running.set(false);
            for (Thread thread : threads) {
                thread.join();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (failure.get() != null) {
                throw failure.get();
            }
            long calls = scriptCalls(redis);
            return new Result(cache ? "on" : "off", limit, seconds, allowed.sum(), rejected.sum(), calls);
        } finally {
            lettuce.closeQuietly();
        }
    }

    private static long scriptCalls(RedisServer redis) {
        long calls = 0;
        for (String line : String.valueOf(redis.call("INFO", "commandstats")).split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                calls += Long.parseLong(
                        line.replaceAll("^cmdstat_[^:]+:calls=(\\d+),.*$", "$1").trim());
            }
        }
        return calls;
    }
}
