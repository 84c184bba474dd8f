package dev.ratelimit.api;

/**
 * What a window does while the limiter's store cannot decide (it is unreachable, slow past its
 * timeout, or its circuit breaker is open).
 *
 * <p>A window that names none follows the limiter's choice for its unit: request and token windows
 * {@link #OPEN} (or {@link #CLOSED} when the limiter fails closed), windows of money and of every
 * other unit {@link #CLOSED}.
 */
public enum FailurePolicy {

    /**
     * Admit without checking: the request passes, nothing is counted, and the decision names the
     * window among those not checked ({@link Decision#unchecked()}).
     */
    OPEN,

    /**
     * Refuse: the limiter throws {@link RateLimiterUnavailableException} (a 503 over HTTP) for a
     * request that touches the window.
     */
    CLOSED,

    /**
     * Decide in this process against its share of the limit: the limit divided by the number of
     * instances the limiter is told to expect, rounded down, counted in memory over the window's length
     * from the moment the store stopped deciding. As many instances together admit at most the
     * limit while the store is away; what the store had counted before is not known to them, so over
     * a window that spans the outage the total stays below twice the limit. Each estimate counts in
     * full (settling does not give back locally): the share errs on the side of refusing.
     */
    LOCAL;

    /**
     * The policy named by a word of configuration: {@code open}, {@code closed} or {@code local}, in
     * any case.
     *
     * @param name the word
     * @return the policy
     * @throws IllegalArgumentException naming the word when it is none of the three
     */
    public static FailurePolicy of(String name) {
        Checks.notNull(name, "name");
        for (FailurePolicy policy : values()) {
            if (policy.name().equalsIgnoreCase(name.trim())) {
                return policy;
            }
        }
        throw new IllegalArgumentException("failure policy must be one of open, closed, local, was '" + name + "'");
    }
}
