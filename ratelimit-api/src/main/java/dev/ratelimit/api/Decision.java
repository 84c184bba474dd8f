package dev.ratelimit.api;

import java.time.Duration;

/**
 * The outcome of one check.
 *
 * <p>{@link #window()} is the window that decided: on rejection the window that rejected, on
 * success the window with the least remaining (ties go to the shortest). {@code remaining} counts
 * that window's budget after this request: 9, 8, &hellip; 0 on successive allows of a 10-limit
 * window, and 0 on rejection.
 *
 * @param allowed whether the request may proceed
 * @param limit the limit of the deciding window
 * @param remaining requests left in the deciding window after this one; 0 on rejection
 * @param retryAfter on rejection, the time until the oldest entry of the rejecting window leaves it
 *     (when a retry can first succeed); {@link Duration#ZERO} when allowed
 * @param window the deciding window
 * @param resetAfter the time until the oldest request counted in the deciding window leaves it and
 *     its budget grows again; {@link Duration#ZERO} when the window holds nothing
 * @param degraded {@code true} when the store could not be consulted and the request was let
 *     through because the limiter fails open; such decisions count nothing
 */
public record Decision(
        boolean allowed,
        int limit,
        int remaining,
        Duration retryAfter,
        Window window,
        Duration resetAfter,
        boolean degraded) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if a duration or the window is {@code null}
     * @throws IllegalArgumentException if the numbers contradict each other
     */
    public Decision {
        Checks.notNull(retryAfter, "retryAfter");
        Checks.notNull(window, "window");
        Checks.notNull(resetAfter, "resetAfter");
        if (remaining < 0 || remaining > limit) {
            throw new IllegalArgumentException("remaining must be between 0 and limit " + limit + ", was " + remaining);
        }
        if (retryAfter.isNegative() || resetAfter.isNegative()) {
            throw new IllegalArgumentException("retryAfter and resetAfter must not be negative");
        }
        if (allowed && !retryAfter.isZero()) {
            throw new IllegalArgumentException("an allowed decision has no retryAfter, was " + retryAfter);
        }
        if (!allowed && remaining != 0) {
            throw new IllegalArgumentException("a rejected decision has remaining 0, was " + remaining);
        }
    }

    /**
     * Creates a decision from the five components every decision has; {@code resetAfter} is taken to
     * be {@code retryAfter} and the decision is not degraded.
     *
     * @param allowed whether the request may proceed
     * @param limit the limit of the deciding window
     * @param remaining requests left in the deciding window after this one; 0 on rejection
     * @param retryAfter on rejection, the time until a retry can first succeed; zero when allowed
     * @param window the deciding window
     */
    public Decision(boolean allowed, int limit, int remaining, Duration retryAfter, Window window) {
        this(allowed, limit, remaining, retryAfter, window, retryAfter, false);
    }

    /**
     * Creates the decision of an allowed request.
     *
     * @param window the window with the least remaining
     * @param remaining requests left in that window after this one
     * @param resetAfter time until that window's oldest request leaves it
     * @return the decision
     */
    public static Decision allow(Window window, int remaining, Duration resetAfter) {
        return new Decision(true, window.limit(), remaining, Duration.ZERO, window, resetAfter, false);
    }

    /**
     * Creates the decision of a rejected request.
     *
     * @param window the window that rejected
     * @param retryAfter time until the oldest entry of that window leaves it
     * @return the decision
     */
    public static Decision reject(Window window, Duration retryAfter) {
        return new Decision(false, window.limit(), 0, retryAfter, window, retryAfter, false);
    }

    /**
     * Creates the decision of a request let through without consulting the store (fail-open).
     *
     * @param window the shortest window that applied
     * @return an allowed, degraded decision with the full budget remaining
     */
    public static Decision degraded(Window window) {
        return new Decision(true, window.limit(), window.limit(), Duration.ZERO, window, Duration.ZERO, true);
    }

    /**
     * Returns the retry delay in whole seconds, as an HTTP {@code Retry-After} header wants it.
     *
     * @return 0 when allowed; otherwise {@link #retryAfter()} rounded up to whole seconds, at least 1
     */
    public long retryAfterSeconds() {
        if (allowed) {
            return 0;
        }
        return Math.max(1, ceilSeconds(retryAfter));
    }

    /**
     * Returns the time until the deciding window's budget grows again in whole seconds, rounded up.
     *
     * @return {@link #resetAfter()} rounded up to whole seconds
     */
    public long resetAfterSeconds() {
        return ceilSeconds(resetAfter);
    }

    private static long ceilSeconds(Duration duration) {
        long seconds = duration.getSeconds();
        return duration.getNano() > 0 ? seconds + 1 : seconds;
    }
}
