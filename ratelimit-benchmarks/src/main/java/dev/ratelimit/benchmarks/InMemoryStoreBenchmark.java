package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** Ours in memory: the full {@link RateLimiter} over {@link InMemoryWindowStore}, no network. */
@State(Scope.Benchmark)
public class InMemoryStoreBenchmark {

    /** Which users the decisions go to: {@code contended} or {@code spread}. */
    @Param({Workload.SPREAD, Workload.CONTENDED})
    public String keys = Workload.SPREAD;

    /** The number of windows per check: 1 or 2. */
    @Param({"1", "2"})
    public int windows = 1;

    private final LongAdder rejected = new LongAdder();
    private boolean contended;
    private List<Window> checked = Workload.ONE_WINDOW;
    private @Nullable RateLimiter limiter;

    /** Builds a limiter over a fresh store. */
    @Setup(Level.Trial)
    public void setUp() {
        checked = Workload.windows(windows);
        contended = Workload.contended(keys);
        limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                .failOpen(false)
                .name("bench")
                .build();
    }

    /** Reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        BenchRedis.recordOutcomes("InMemoryStore", "keys=" + keys + ",windows=" + windows, rejected.sum(), 0);
    }

    /**
     * Checks one request.
     *
     * @return the decision
     */
    @Benchmark
    public Decision check() {
        Decision decision = Objects.requireNonNull(limiter).check(Workload.user(Workload.next(contended)), checked);
        if (!decision.allowed()) {
            rejected.increment();
        }
        return decision;
    }
}
