package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The workload every contender's JMH state shares: which users the decisions go to, how many windows
 * each check has, and the count of decisions that came back rejected.
 */
@State(Scope.Benchmark)
public abstract class WorkloadState {

    /** Which users the decisions go to: {@code contended} or {@code spread}. */
    @Param({Workload.SPREAD, Workload.CONTENDED})
    public String keys = Workload.SPREAD;

    /** The number of windows per check (a peer's bandwidths or limiters): 1 or 2. */
    @Param({"1", "2"})
    public int windows = 1;

    /** Decisions that were rejections; the limits are set so there should be none. */
    protected final LongAdder rejected = new LongAdder();

    /** Whether every decision goes to one user. */
    protected boolean contended;

    /** The windows of every check. */
    protected List<Window> checked = Workload.ONE_WINDOW;

    /**
     * Checks one request of the next user against the workload's windows, blocking, and counts a
     * rejection.
     *
     * @param limiter the limiter under test
     * @return the decision
     */
    protected Decision checkNext(RateLimiter limiter) {
        Decision decision = limiter.check(Workload.user(Workload.next(contended)), checked);
        if (!decision.allowed()) {
            rejected.increment();
        }
        return decision;
    }

    /**
     * Reports the trial's rejections and failed calls under the benchmark's name, with the workload
     * parameters, for the report's outcome check.
     *
     * @param benchmark the contender's name in the outcomes file
     * @param failed calls that failed
     */
    protected void recordOutcomes(String benchmark, long failed) {
        BenchRedis.recordOutcomes(benchmark, "keys=" + keys + ",windows=" + windows, rejected.sum(), failed);
    }

    /** Reads the parameters; call first in each trial's setup. */
    protected void prepareWorkload() {
        checked = Workload.windows(windows);
        contended = Workload.contended(keys);
    }

    /** Empties the private Redis and reads the parameters; call first in a Redis benchmark's trial setup. */
    protected void prepareRedisWorkload() {
        BenchRedis.reset();
        prepareWorkload();
    }
}
