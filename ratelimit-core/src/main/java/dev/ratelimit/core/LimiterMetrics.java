package dev.ratelimit.core;

import dev.ratelimit.api.Decision;

/**
 * What a limiter reports for metrics, in the manner of Caffeine's {@code StatsCounter}: the limiter
 * calls these methods, and an implementation records them in a metrics library, so that the core
 * depends on none. {@code ratelimit-micrometer}'s {@code MicrometerLimiterMetrics} records them as
 * Micrometer meters; without one ({@link SlidingWindowRateLimiter.Builder#metrics}) nothing is
 * recorded.
 *
 * <p>One instance serves one limiter: {@link #bind} is called once, when the limiter is built, before
 * any other method. The other methods are called on the threads that make the checks, often at once:
 * they must be thread-safe and fast, and should not throw. Every method does nothing by default.
 */
public interface LimiterMetrics {

    /**
     * Receives the limiter's readings, for gauges, once, when the limiter is built.
     *
     * @param limiter the limiter's name and its state, read whenever a gauge is read
     */
    default void bind(LimiterState limiter) {}

    /**
     * Records a decision the limiter made: by the store, by the store's failure (a {@linkplain
     * Decision#degraded() degraded} one, while failing open), or without a store call for a request
     * that no window can ever fit (then {@code nanos} is 0). The decision names its deciding window,
     * whether it was allowed, and the shadow windows that would have refused it.
     *
     * @param tier the tier's name
     * @param decision the decision
     * @param nanos how long the check took, store call included
     */
    default void recordDecision(String tier, Decision decision, long nanos) {}

    /**
     * Records a decision of a disabled limiter (the kill switch): allowed, nothing counted.
     *
     * @param tier the tier's name
     * @param decision the decision
     */
    default void recordDisabled(String tier, Decision decision) {}

    /**
     * Records a rejection the local rejection cache answered, with no store call.
     *
     * @param tier the tier's name
     * @param decision the rejection
     */
    default void recordCachedRejection(String tier, Decision decision) {}

    /**
     * Records a store call that failed ({@code error}) or that the open circuit breaker refused
     * ({@code circuit_open}). Whether the limiter now fails open or closed is in {@link
     * LimiterState#failingOpen()} and {@link LimiterState#storeUnavailable()}.
     *
     * @param reason {@code error} or {@code circuit_open}
     */
    default void recordStoreFailure(String reason) {}

    /**
     * Records a settlement the store did not take at once, queued to be retried.
     *
     * @param reason {@code error}, {@code circuit_open} or {@code in_doubt} (the store may have applied it)
     */
    default void recordSettleDeferred(String reason) {}

    /** Records a queued settlement the store took on a retry. */
    default void recordSettleRetried() {}

    /**
     * Records a settlement given up: its estimate stays charged until its window passes.
     *
     * @param reason {@code expired} or {@code queue_full}
     */
    default void recordSettleFailure(String reason) {}

    /**
     * Records a store call the circuit breaker let through, by how it ended for the breaker.
     *
     * @param kind {@code successful}, {@code failed}, or {@code ignored} (a failure the breaker's
     *     configuration does not count)
     * @param nanos how long the call took
     */
    default void recordBreakerCall(String kind, long nanos) {}

    /** Records a store call the open circuit breaker refused. */
    default void recordBreakerNotPermitted() {}
}
