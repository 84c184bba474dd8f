package dev.ratelimit.genai;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import java.util.Objects;

/**
 * Thrown instead of calling the model when the end user's windows, or a shared budget such as the
 * model's upstream cap, refuse the call; nothing was charged and the model was not called.
 *
 * <p>The {@link #decision()} says which window refused ({@link Decision#window()}, {@link
 * Decision#budget()} for a shared budget), and when a retry can first succeed ({@link
 * Decision#retryAfter()}, zero when the call alone is larger than the window: {@link
 * Decision#tooLarge()}).
 */
public final class RateLimitExceededException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The user whose call was refused. */
    private final String userId;

    private final transient Decision decision;
    private final transient Tier tier;

    /**
     * Creates the exception for a refused call.
     *
     * @param userId the end user the call was resolved to
     * @param tier the user's tier the call was checked against
     * @param decision the refused decision
     */
    public RateLimitExceededException(String userId, Tier tier, Decision decision) {
        super(message(userId, decision));
        this.userId = userId;
        this.tier = Objects.requireNonNull(tier, "tier");
        this.decision = Objects.requireNonNull(decision, "decision");
    }

    private static String message(String userId, Decision decision) {
        String owner = decision.budget() == null ? "user " + userId : "shared budget " + decision.budget();
        String retry = decision.tooLarge()
                ? "the call alone is larger than the window's limit " + decision.limit()
                : "retry after " + decision.retryAfterSeconds() + "s";
        return "rate limit exceeded for " + owner + " (window "
                + decision.window().name() + "): " + retry;
    }

    /**
     * Returns the end user whose call was refused.
     *
     * @return the user id the call was resolved to
     */
    public String userId() {
        return userId;
    }

    /**
     * Returns the limiter's decision: the refusing window, its budget, and the retry time.
     *
     * @return the refused decision; never {@code null}
     */
    public Decision decision() {
        return Objects.requireNonNull(decision, "decision (not serialized)");
    }

    /**
     * Returns the user's tier the call was checked against, for the HTTP contract's policy headers.
     *
     * @return the tier; never {@code null}
     */
    public Tier tier() {
        return Objects.requireNonNull(tier, "tier (not serialized)");
    }
}
