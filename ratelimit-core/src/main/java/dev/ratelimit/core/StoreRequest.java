package dev.ratelimit.core;

import dev.ratelimit.api.Window;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link WindowStore} evaluates in one atomic step: the windows of one subject, shortest
 * first, the number of permits the request takes, and the time of the check.
 *
 * <p>The request is built and validated by the core; stores may rely on its invariants: a non-empty
 * subject, a non-empty list of windows strictly ordered by length (so no two share a length), and
 * {@code permits >= 1}.
 *
 * @param subject whose budget is charged (a user id); any non-empty string
 * @param windows the windows, strictly ascending by length
 * @param permits how many units the request consumes in every window (1 for request counting; room
 *     for token budgets)
 * @param nowMillis the time of the check in epoch milliseconds, or {@link #STORE_TIME} to use the
 *     store's own clock
 */
public record StoreRequest(String subject, List<Window> windows, int permits, long nowMillis) {

    /** The {@link #nowMillis()} value that asks the store to use its own clock. */
    public static final long STORE_TIME = Long.MIN_VALUE;

    /**
     * Validates the invariants stores rely on.
     *
     * @throws NullPointerException if {@code subject} or {@code windows} is {@code null}
     * @throws IllegalArgumentException if an invariant does not hold
     */
    public StoreRequest {
        Objects.requireNonNull(subject, "subject");
        if (subject.isEmpty()) {
            throw new IllegalArgumentException("subject must not be empty");
        }
        windows = List.copyOf(Objects.requireNonNull(windows, "windows"));
        if (windows.isEmpty()) {
            throw new IllegalArgumentException("windows must not be empty");
        }
        for (int i = 1; i < windows.size(); i++) {
            if (windows.get(i - 1).length().compareTo(windows.get(i).length()) >= 0) {
                throw new IllegalArgumentException("windows must be strictly ascending by length");
            }
        }
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be at least 1, was " + permits);
        }
        if (nowMillis != STORE_TIME && nowMillis < 0) {
            throw new IllegalArgumentException("nowMillis must not be negative, was " + nowMillis);
        }
    }

    /**
     * Tells whether the request carries its own time rather than asking for the store's clock.
     *
     * @return {@code true} when {@link #nowMillis()} is a timestamp
     */
    public boolean hasTime() {
        return nowMillis != STORE_TIME;
    }
}
