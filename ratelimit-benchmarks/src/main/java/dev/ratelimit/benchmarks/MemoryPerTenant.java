package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.github.bucket4j.distributed.BucketProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RedissonClient;
import org.threeten.extra.MutableClock;

/**
 * Redis memory of one tenant whose whole budget is used, per default tier, from {@code MEMORY USAGE
 * key SAMPLES 0} summed over every key the contender created.
 *
 * <p>Ours: an injected clock spreads {@code day - minute} requests over the day (never filling the
 * minute window), then, a minute later, {@code minute} requests in one burst, so both windows are full
 * and the next check is rejected. Redisson: its minute and day limiters each take their limit of
 * single-permit acquires (it cannot take an injected clock). Bucket4j: its bucket state has a fixed
 * size whatever the token count, so one consume of the minute capacity exhausts it.
 */
final class MemoryPerTenant {

    /** One contender's memory for one tier. */
    record Result(String tier, String contender, long bytes, int keys, String note) {}

    private MemoryPerTenant() {}

    static Result ours(RedisServer redis, Tier tier) throws InterruptedException {
        redis.call("FLUSHALL");
        Window minute = tier.windows().get(0);
        Window day = tier.windows().get(1);
        MutableClock clock = MutableClock.of(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        RedisClient client = RedisClient.create(redis.uri());
        WindowStore store = LettuceWindowStore.create(client);
        try {
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .clock(clock)
                    .failOpen(false)
                    .build();
            // Connect first: checks issued while the connection is being opened may reach Redis out
            // of order, and the fill relies on the clock's order.
            limiter.check("warm-up", Workload.ONE_WINDOW);
            long spacing = minute.lengthMillis() / minute.limit() + 1;
            Pipelined pipelined = new Pipelined();
            for (int i = 0; i < day.limit() - minute.limit(); i++) {
                pipelined.submit(() -> limiter.checkAsync("tenant-full", tier));
                clock.add(spacing, ChronoUnit.MILLIS);
            }
            clock.add(minute.length().plusSeconds(1));
            for (int i = 0; i < minute.limit(); i++) {
                pipelined.submit(() -> limiter.checkAsync("tenant-full", tier));
                clock.add(1, ChronoUnit.MILLIS);
            }
            pipelined.await();
            Decision next = limiter.check("tenant-full", tier);
            String note = next.allowed()
                    ? "NOT full: next check allowed"
                    : "next check rejected by " + next.window().name();
            if (pipelined.rejected > 0) {
                note += "; " + pipelined.rejected + " fill checks rejected";
            }
            return measure(redis, tier, "ours (sliding log, both windows)", note);
        } finally {
            if (store instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    // best effort
                }
            }
            client.shutdown();
        }
    }

    static Result bucket4j(RedisServer redis, Tier tier) {
        redis.call("FLUSHALL");
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, byte[]> connection = Peers.bucket4jConnection(client)) {
            BucketProxy bucket = Peers.bucket4j(connection)
                    .builder()
                    .build("bucket4j:tenant-full", () -> Peers.bucketConfiguration(tier.windows()));
            boolean consumed = bucket.tryConsume(tier.windows().get(0).limit());
            boolean next = bucket.tryConsume(1);
            return measure(
                    redis,
                    tier,
                    "Bucket4j (token bucket, both bandwidths)",
                    (consumed ? "" : "fill rejected; ") + (next ? "NOT full" : "next consume rejected"));
        } finally {
            client.shutdown();
        }
    }

    static Result redisson(RedisServer redis, Tier tier) throws InterruptedException {
        redis.call("FLUSHALL");
        RedissonClient client = Peers.redisson();
        try {
            Pipelined pipelined = new Pipelined();
            boolean full = true;
            for (Window window : tier.windows()) {
                RRateLimiter limiter = Peers.redissonLimiter(client, "tenant-full", window);
                for (int i = 0; i < window.limit(); i++) {
                    pipelined.submitBoolean(() -> limiter.tryAcquireAsync());
                }
                pipelined.await();
                full &= !limiter.tryAcquire();
            }
            String note = (full ? "next acquire rejected" : "NOT full")
                    + (pipelined.rejected > 0 ? "; " + pipelined.rejected + " fill acquires rejected" : "");
            return measure(redis, tier, "Redisson (RRateLimiter per window)", note);
        } finally {
            client.shutdown();
        }
    }

    private static Result measure(RedisServer redis, Tier tier, String contender, String note) {
        if (!(redis.call("KEYS", "*tenant-full*") instanceof List<?> keys)) {
            throw new IllegalStateException("KEYS answered no list");
        }
        long bytes = 0;
        int count = 0;
        for (Object key : keys) {
            Object usage = redis.call("MEMORY", "USAGE", String.valueOf(key), "SAMPLES", "0");
            if (usage instanceof Long value) {
                bytes += value;
                count++;
            }
        }
        return new Result(tier.name(), contender, bytes, count, note);
    }

    /** Keeps up to 64 asynchronous calls in flight while filling, so large tiers fill in seconds. */
    private static final class Pipelined {
        private final Semaphore permits = new Semaphore(BenchRedis.IN_FLIGHT);
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private volatile int rejected;

        void submit(Supplier<CompletionStage<Decision>> call) throws InterruptedException {
            permits.acquire();
            call.get().whenComplete((decision, error) -> {
                if (error != null) {
                    failure.set(error);
                } else if (!decision.allowed()) {
                    synchronized (this) {
                        rejected++;
                    }
                }
                permits.release();
            });
        }

        void submitBoolean(Supplier<CompletionStage<Boolean>> call) throws InterruptedException {
            permits.acquire();
            call.get().whenComplete((allowed, error) -> {
                if (error != null) {
                    failure.set(error);
                } else if (!allowed) {
                    synchronized (this) {
                        rejected++;
                    }
                }
                permits.release();
            });
        }

        void await() throws InterruptedException {
            if (!permits.tryAcquire(BenchRedis.IN_FLIGHT, 60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("fill calls did not complete within 60 s");
            }
            permits.release(BenchRedis.IN_FLIGHT);
            Throwable error = failure.get();
            if (error != null) {
                throw new IllegalStateException("a fill call failed", error);
            }
        }
    }
}
