package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import io.lettuce.core.RedisClient;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Ours over Lettuce: the full {@link RateLimiter} (validation, ordering, circuit breaker, decision)
 * over {@link LettuceWindowStore}, blocking and asynchronous.
 */
@State(Scope.Benchmark)
public class LettuceStoreBenchmark extends WorkloadState {

    private final InFlight inFlight = new InFlight();
    private @Nullable RedisClient client;
    private @Nullable WindowStore store;
    private @Nullable RateLimiter limiter;

    /** Empties Redis and builds the limiter; it fails closed, so a store failure fails the run. */
    @Setup(Level.Trial)
    public void setUp() {
        BenchRedis.reset();
        prepareWorkload();
        RedisClient created = RedisClient.create(BenchRedis.uri());
        client = created;
        // Connection set-up is not measured: a fork starting on a busy machine may take longer than
        // the default 3 s to connect, and the fail-closed warm-up check below would end the run.
        WindowStore built = LettuceWindowStore.builder(created)
                .connectTimeout(java.time.Duration.ofSeconds(30))
                .build();
        store = built;
        limiter = SlidingWindowRateLimiter.builder(built)
                .failOpen(false)
                .name("bench")
                .build();
        // Wait for the connection before measuring: the store starts opening it at creation, and if 8
        // threads' first checks all waited for it the circuit breaker would count slow calls and open.
        limiter.check("warm-up", checked);
    }

    /** Lets the asynchronous checks of an iteration complete before the next one starts. */
    @TearDown(Level.Iteration)
    public void drain() throws InterruptedException {
        inFlight.drain();
    }

    /** Closes the store and client and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        BenchRedis.recordOutcomes(
                "LettuceStore", "keys=" + keys + ",windows=" + windows, rejected.sum(), inFlight.failed());
        if (store instanceof AutoCloseable closeable) {
            closeable.close();
        }
        if (client != null) {
            client.shutdown();
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

    /**
     * Starts one check once fewer than 64 are in flight.
     *
     * @throws InterruptedException if interrupted while waiting for room
     */
    @Benchmark
    public void async64() throws InterruptedException {
        inFlight.acquire();
        Objects.requireNonNull(limiter)
                .checkAsync(Workload.user(Workload.next(contended)), checked)
                .whenComplete((decision, failure) -> {
                    if (decision != null && !decision.allowed()) {
                        rejected.increment();
                    }
                    inFlight.release(failure);
                });
    }
}
