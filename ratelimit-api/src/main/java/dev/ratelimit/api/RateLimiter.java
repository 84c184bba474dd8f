package dev.ratelimit.api;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A sliding-window rate limiter: every check either records one request for a user in all of its
 * windows or, if any window is full, records nothing.
 *
 * <p>Windows are evaluated shortest first and the check is all or nothing: a request rejected by
 * the day window is not charged to the minute window. Implementations are thread-safe.
 *
 * <p>Arguments are validated before any store I/O: a {@code null} argument raises {@link
 * NullPointerException} and an invalid one {@link IllegalArgumentException}, each naming the
 * argument. When the backing store cannot be reached and the limiter is configured to fail closed,
 * checks raise {@link RateLimiterUnavailableException}.
 */
public interface RateLimiter {

    /**
     * Checks one request of {@code userId} against a single window of {@code limit} requests per
     * {@code window}.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param limit the number of requests allowed within the window, at least 1
     * @param window the window length, a whole number of seconds, at least one second
     * @return the decision; never {@code null}
     */
    Decision check(String userId, int limit, Duration window);

    /**
     * Checks one request of {@code userId} against several windows at once, shortest first, all or
     * nothing.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param windows the windows to satisfy, in any order; not empty, no two of the same length
     * @return the decision; on rejection {@link Decision#window()} is the window that rejected
     */
    Decision check(String userId, List<Window> windows);

    /**
     * Checks one request of {@code userId} against the windows of {@code tier}.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @return the decision
     */
    Decision check(String userId, Tier tier);

    /**
     * Checks one request without blocking the caller; see {@link #check(String, int, Duration)}.
     *
     * <p>Invalid arguments are rejected by throwing from this method, before a stage is returned.
     *
     * @param userId the identity whose budget is charged
     * @param limit the number of requests allowed within the window
     * @param window the window length
     * @return a stage completed with the decision, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    CompletionStage<Decision> checkAsync(String userId, int limit, Duration window);

    /**
     * Checks one request against several windows without blocking the caller; see {@link
     * #check(String, List)}.
     *
     * @param userId the identity whose budget is charged
     * @param windows the windows to satisfy
     * @return a stage completed with the decision, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    CompletionStage<Decision> checkAsync(String userId, List<Window> windows);

    /**
     * Checks one request against the windows of {@code tier} without blocking the caller.
     *
     * @param userId the identity whose budget is charged
     * @param tier the tier whose windows apply
     * @return a stage completed with the decision
     */
    default CompletionStage<Decision> checkAsync(String userId, Tier tier) {
        Checks.notNull(tier, "tier");
        return checkAsync(userId, tier.windows());
    }
}
