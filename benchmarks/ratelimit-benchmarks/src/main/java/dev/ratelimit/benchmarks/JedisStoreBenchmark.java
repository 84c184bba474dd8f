package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.redis.jedis.JedisWindowStore;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import redis.clients.jedis.RedisClient;

/** Ours over Jedis: the full {@link RateLimiter} over {@link JedisWindowStore} and a sized pool. */
@State(Scope.Benchmark)
public class JedisStoreBenchmark extends WorkloadState {

    private @Nullable RedisClient jedis;
    private @Nullable RateLimiter limiter;

    /** Empties Redis and builds the limiter; it fails closed, so a store failure fails the run. */
    @Setup(Level.Trial)
    public void setUp() {
        prepareRedisWorkload();
        RedisClient created = BenchRedis.jedis();
        jedis = created;
        limiter = SlidingWindowRateLimiter.builder(JedisWindowStore.create(created))
                .failOpen(false)
                .name("bench")
                .build();
        // The store opens no connection of its own: the client's pool opens one on its first borrow,
        // so one check before measuring keeps that set-up out of the numbers.
        limiter.check("warm-up", checked);
    }

    /** Closes the pool and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("JedisStore", 0);
        if (jedis != null) {
            jedis.close();
        }
    }

    /**
     * Checks one request and waits for the decision.
     *
     * @return the decision
     */
    @Benchmark
    public Decision blocking() {
        return checkNext(Objects.requireNonNull(limiter));
    }
}
