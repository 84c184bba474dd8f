package dev.ratelimit.core;

import java.util.List;

/**
 * A limiter's readings for gauges, handed to {@link LimiterMetrics#bind}: each method reads the
 * current value, and is cheap and thread-safe.
 */
public interface LimiterState {

    /**
     * Returns the limiter's name ({@link SlidingWindowRateLimiter.Builder#name}).
     *
     * @return the name
     */
    String name();

    /**
     * Tells whether the kill switch is on: every request is allowed and nothing is counted.
     *
     * @return whether the limiter is disabled
     */
    boolean disabled();

    /**
     * Tells whether checks are let through because the store fails (fail-open).
     *
     * @return whether the limiter fails open now
     */
    boolean failingOpen();

    /**
     * Tells whether the store fails, whether the limiter fails open or closed: the alerting reading.
     *
     * @return whether the last store call failed or was refused by the breaker
     */
    boolean storeUnavailable();

    /**
     * Tells whether the limiter has a rejection cache ({@link
     * SlidingWindowRateLimiter.Builder#rejectionCache}); {@link #cachedRejections()} is 0 without one.
     *
     * @return whether it caches rejections
     */
    boolean cachesRejections();

    /**
     * Returns the number of users with a cached rejection.
     *
     * @return the rejection cache's size
     */
    int cachedRejections();

    /**
     * Returns the number of settlements queued for the store or being retried.
     *
     * @return the settlements pending
     */
    int pendingSettlements();

    /**
     * Returns how long the oldest queued settlement has waited for the store.
     *
     * @return milliseconds; 0 when none waits
     */
    double oldestPendingSettlementMillis();

    /**
     * Returns the circuit breaker's name, {@code ratelimit-} and the limiter's name.
     *
     * @return the breaker's name
     */
    String breakerName();

    /**
     * Returns every state the circuit breaker can be in, lower case: {@code closed}, {@code open},
     * {@code half_open} and the others of resilience4j's breaker.
     *
     * @return the states
     */
    List<String> breakerStates();

    /**
     * Returns the circuit breaker's state now, one of {@link #breakerStates()}.
     *
     * @return the state
     */
    String breakerState();

    /**
     * Returns the percentage of failed calls in the breaker's sliding window.
     *
     * @return 0 to 100, or -1 until the window holds its minimum number of calls
     */
    double breakerFailureRate();

    /**
     * Returns the percentage of slow calls in the breaker's sliding window.
     *
     * @return 0 to 100, or -1 until the window holds its minimum number of calls
     */
    double breakerSlowCallRate();

    /**
     * Returns the calls in the breaker's sliding window that failed, or that succeeded.
     *
     * @param failed whether to count the failed calls
     * @return the number of calls
     */
    int breakerBufferedCalls(boolean failed);

    /**
     * Returns the slow calls in the breaker's sliding window that failed, or that succeeded.
     *
     * @param failed whether to count the failed calls
     * @return the number of slow calls
     */
    int breakerSlowCalls(boolean failed);
}
