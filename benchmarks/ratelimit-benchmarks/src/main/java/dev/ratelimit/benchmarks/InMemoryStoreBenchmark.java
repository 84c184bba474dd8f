package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** Ours in memory: the full {@link RateLimiter} over {@link InMemoryWindowStore}, no network. */
@State(Scope.Benchmark)
public class InMemoryStoreBenchmark extends WorkloadState {

    private @Nullable RateLimiter limiter;

    /** Builds a limiter over a fresh store. */
    @Setup(Level.Trial)
    public void setUp() {
        prepareWorkload();
        limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                .failOpen(false)
                .name("bench")
                .build();
    }

    /** Reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("InMemoryStore", 0);
    }

    /**
     * Checks one request.
     *
     * @return the decision
     */
    @Benchmark
    public Decision check() {
        return checkNext(Objects.requireNonNull(limiter));
    }
}
