package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.github.bucket4j.distributed.BucketProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
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
        LettuceStore lettuce = LettuceStore.open(redis.uri());
        try {
            RateLimiter limiter = lettuce.failClosedLimiter().clock(clock).build();
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
            lettuce.closeQuietly();
        }
    }

    /** The day budget of the token-budget table: an enterprise tenant's requests per day. */
    static final long DAY_REQUESTS = 100_000;

    /** The day budget of the token-budget table: an enterprise tenant's tokens per day. */
    static final long DAY_TOKENS = 1_000_000_000L;

    /** Tokens per reservation: {@link #DAY_REQUESTS} reservations use up {@link #DAY_TOKENS}. */
    static final long TOKENS_PER_REQUEST = DAY_TOKENS / DAY_REQUESTS;

    /**
     * The memory of one tenant's day budgets, used up over a day, exact and at 1-minute precision,
     * requests and tokens, next to a token bucket of the same capacities, and of a 30-day money budget
     * at 1-hour precision used up over 30 days: the rows of the token-budget table.
     */
    static List<Result> budgets(RedisServer redis) throws InterruptedException {
        Duration day = Duration.ofDays(1);
        Duration minute = Duration.ofMinutes(1);
        Window requests = new Window("requests/day", DAY_REQUESTS, day);
        Window tokens = Window.tokens("tokens/day", DAY_TOKENS, day);
        List<Result> results = new java.util.ArrayList<>();
        String r = "100,000 requests / day";
        String t = "10^9 tokens / day (100,000 reservations of 10,000)";
        String both = "both day windows";
        results.add(BenchmarkRunner.progressOf(fillDay(redis, r, "ours, exact (sliding log)", requests)));
        results.add(BenchmarkRunner.progressOf(
                fillDay(redis, r, "ours, 1-minute precision (ring)", requests.withPrecision(minute))));
        results.add(BenchmarkRunner.progressOf(bucket4jBudget(redis, r, List.of(requests), DAY_REQUESTS)));
        results.add(BenchmarkRunner.progressOf(fillDay(redis, t, "ours, exact (weighted log + sum)", tokens)));
        results.add(BenchmarkRunner.progressOf(
                fillDay(redis, t, "ours, 1-minute precision (ring)", tokens.withPrecision(minute))));
        results.add(BenchmarkRunner.progressOf(bucket4jBudget(redis, t, List.of(tokens), DAY_TOKENS)));
        results.add(BenchmarkRunner.progressOf(fillDay(
                redis,
                both,
                "ours, 1-minute precision (two rings)",
                requests.withPrecision(minute),
                tokens.withPrecision(minute))));
        results.add(BenchmarkRunner.progressOf(fillDay(redis, both, "ours, exact (three keys)", requests, tokens)));
        results.add(BenchmarkRunner.progressOf(bucket4jBudget(redis, both, List.of(requests, tokens), DAY_TOKENS)));
        results.add(BenchmarkRunner.progressOf(fillMonth(redis)));
        return results;
    }

    /** The money budget of the token-budget table: micro-dollars per 30 days ($360). */
    static final long MONTH_USD_MICROS = 360_000_000L;

    /** Reservations that use up {@link #MONTH_USD_MICROS}: one an hour for 30 days, of $0.50 each. */
    static final int MONTH_RESERVATIONS = 720;

    /**
     * A tenant's spend per 30 days at 1-hour precision used up on an injected clock: {@value
     * #MONTH_RESERVATIONS} reservations spread evenly over 30 days less an hour, so every step of the
     * ring holds an entry and the first is still in the window at the end; the next reservation must
     * be rejected.
     */
    private static Result fillMonth(RedisServer redis) throws InterruptedException {
        Duration month = Duration.ofDays(30);
        Window spend = Window.of("spend/30d", MONTH_USD_MICROS, month, Window.Unit.USD_MICROS)
                .withPrecision(Duration.ofHours(1));
        return fill(
                redis,
                "$360 / 30 days (720 reservations of 500,000 usd_micros, one an hour)",
                "ours, 1-hour precision (ring)",
                Tier.of("budget", spend),
                Amounts.of(Window.Unit.USD_MICROS, MONTH_USD_MICROS / MONTH_RESERVATIONS),
                MONTH_RESERVATIONS,
                month.minusHours(1));
    }

    /**
     * Spreads {@link #DAY_REQUESTS} reservations of {@link #TOKENS_PER_REQUEST} tokens over a day on an
     * injected clock, then measures the tenant's keys; the next reservation must be rejected.
     */
    private static Result fillDay(RedisServer redis, String budget, String contender, Window... windows)
            throws InterruptedException {
        // spread over the day less a minute, so the first one is still in the window at the end
        return fill(
                redis,
                budget,
                contender,
                Tier.of("budget", windows),
                Amounts.tokens(TOKENS_PER_REQUEST),
                DAY_REQUESTS,
                Duration.ofDays(1).minusMinutes(1));
    }

    /**
     * Spreads {@code count} reservations of {@code each} evenly over {@code spread} on an injected
     * clock, then measures the tenant's keys; the next reservation must be rejected.
     */
    private static Result fill(
            RedisServer redis, String budget, String contender, Tier tier, Amounts each, long count, Duration spread)
            throws InterruptedException {
        redis.call("FLUSHALL");
        MutableClock clock = MutableClock.of(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        LettuceStore lettuce = LettuceStore.open(redis.uri());
        try {
            RateLimiter limiter = lettuce.failClosedLimiter().clock(clock).build();
            limiter.check("warm-up", Workload.ONE_WINDOW);
            long spacing = spread.toMillis() / count;
            Pipelined pipelined = new Pipelined();
            for (long i = 0; i < count; i++) {
                pipelined.submit(() -> limiter.reserveAsync("tenant-full", tier, each, List.of())
                        .thenApply(dev.ratelimit.api.Reservation::decision));
                clock.add(spacing, ChronoUnit.MILLIS);
            }
            pipelined.await();
            Decision next =
                    limiter.reserve("tenant-full", tier, each, List.of()).decision();
            String note = next.allowed() ? "NOT full: next reservation allowed" : "next reservation rejected";
            if (pipelined.rejected > 0) {
                note += "; " + pipelined.rejected + " fill reservations rejected";
            }
            return measure(redis, budget, contender, note);
        } finally {
            lettuce.closeQuietly();
        }
    }

    private static Result bucket4jBudget(RedisServer redis, String budget, List<Window> windows, long consume) {
        redis.call("FLUSHALL");
        RedisClient client = RedisClient.create(redis.uri());
        try (StatefulRedisConnection<String, byte[]> connection = Peers.bucket4jConnection(client)) {
            BucketProxy bucket = Peers.bucket4j(connection)
                    .builder()
                    .build("bucket4j:tenant-full", () -> Peers.bucketConfiguration(windows));
            boolean consumed =
                    bucket.tryConsume(Math.min(consume, windows.get(0).limit()));
            // a greedy refill gives back a few tokens every millisecond: the next request is one of the fill's
            boolean next = bucket.tryConsume(windows.get(0).isTokens() ? TOKENS_PER_REQUEST : 1);
            return measure(
                    redis,
                    budget,
                    "Bucket4j token bucket (" + windows.size() + (windows.size() == 1 ? " bandwidth)" : " bandwidths)"),
                    (consumed ? "" : "fill rejected; ") + (next ? "NOT full" : "next consume rejected"));
        } finally {
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
        return measure(redis, tier.name(), contender, note);
    }

    private static Result measure(RedisServer redis, String tier, String contender, String note) {
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
        return new Result(tier, contender, bytes, count, note);
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
