package dev.ratelimit.benchmarks;

import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The workload of a contender with an asynchronous benchmark: it also bounds and counts the calls in
 * flight, and lets them complete at the end of each iteration.
 */
@State(Scope.Benchmark)
public abstract class AsyncWorkloadState extends WorkloadState {

    /** The asynchronous calls in flight, at most {@link BenchRedis#IN_FLIGHT}. */
    protected final InFlight inFlight = new InFlight();

    /**
     * Lets the asynchronous calls of an iteration complete before the next one starts.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    @TearDown(Level.Iteration)
    public void drain() throws InterruptedException {
        inFlight.drain();
    }
}
