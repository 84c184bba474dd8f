package dev.ratelimit.benchmarks;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Keeps a fixed number of asynchronous calls in flight: a call starts only when one of the previous
 * ones has completed, so the benchmark's operation rate is the completion rate.
 */
final class InFlight {

    private final Semaphore permits = new Semaphore(BenchRedis.IN_FLIGHT);
    private final LongAdder failed = new LongAdder();

    /** Waits for room for one more call. */
    void acquire() throws InterruptedException {
        permits.acquire();
    }

    /** Marks one call completed. */
    void release(@org.jspecify.annotations.Nullable Throwable failure) {
        if (failure != null) {
            failed.increment();
        }
        permits.release();
    }

    /** Waits until every call in flight has completed, so iterations do not overlap. */
    void drain() throws InterruptedException {
        if (!permits.tryAcquire(BenchRedis.IN_FLIGHT, 30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("asynchronous calls did not complete within 30 s");
        }
        permits.release(BenchRedis.IN_FLIGHT);
    }

    long failed() {
        return failed.sum();
    }
}
