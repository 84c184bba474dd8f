package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
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
 * over {@link dev.ratelimit.redis.lettuce.LettuceWindowStore}, blocking and asynchronous.
 */
@State(Scope.Benchmark)
public class LettuceStoreBenchmark extends AsyncWorkloadState {

    private @Nullable LettuceStore lettuce;
    private @Nullable RateLimiter limiter;

    /** Empties Redis and builds the limiter; it fails closed, so a store failure fails the run. */
    @Setup(Level.Trial)
    public void setUp() {
        prepareRedisWorkload();
        // Connection set-up is not measured, so the store may wait long for it (see PATIENT_CONNECT).
        LettuceStore opened = LettuceStore.open(BenchRedis.uri(), LettuceStore.PATIENT_CONNECT);
        lettuce = opened;
        limiter = opened.failClosedLimiter().name("bench").build();
        // Wait for the connection before measuring: the store starts opening it at creation, and if 8
        // threads' first checks all waited for it the circuit breaker would count slow calls and open.
        limiter.check("warm-up", checked);
    }

    /** Closes the store and client and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("LettuceStore", inFlight.failed());
        if (lettuce != null) {
            lettuce.close();
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
