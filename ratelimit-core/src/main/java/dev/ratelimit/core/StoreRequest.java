package dev.ratelimit.core;

import dev.ratelimit.api.Window;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a {@link WindowStore} evaluates in one atomic step: the windows of one or more scopes, the
 * number of permits the request takes, and the time of the check.
 *
 * <p>A check of one user has one {@link Scope}: the user's windows. Further scopes charge the same
 * request, in the same atomic step and all or nothing, to budgets shared by many users (an upstream
 * provider's cap, say). Windows are evaluated in {@link #windows()} order: scope by scope, each
 * scope's windows shortest first; {@link Evaluation} indices refer to that order.
 *
 * <p>The request is validated on construction; stores may rely on its invariants: at least one
 * scope, distinct subjects, each a non-empty string with a non-empty list of windows strictly
 * ascending by length, and {@code permits >= 1}.
 *
 * @param scopes the budgets charged, the requesting user's first
 * @param permits how many units the request consumes in every window (1 for request counting; more
 *     for token budgets)
 * @param nowMillis the time of the check in epoch milliseconds, or {@link #STORE_TIME} to use the
 *     store's own clock
 */
public record StoreRequest(List<Scope> scopes, int permits, long nowMillis) {

    /** The {@link #nowMillis()} value that asks the store to use its own clock. */
    public static final long STORE_TIME = Long.MIN_VALUE;

    /**
     * Validates the invariants stores rely on.
     *
     * @throws NullPointerException if {@code scopes} or a scope is {@code null}
     * @throws IllegalArgumentException if an invariant does not hold
     */
    public StoreRequest {
        scopes = List.copyOf(Objects.requireNonNull(scopes, "scopes"));
        if (scopes.isEmpty()) {
            throw new IllegalArgumentException("scopes must not be empty");
        }
        if (scopes.size() > 1) {
            Set<String> subjects = new HashSet<>();
            for (Scope scope : scopes) {
                if (!subjects.add(scope.subject())) {
                    throw new IllegalArgumentException(
                            "scopes must have distinct subjects, '" + scope.subject() + "' appears twice");
                }
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
     * Creates the request of one user's check: a single scope.
     *
     * @param subject the user id
     * @param windows the user's windows, strictly ascending by length
     * @param permits units consumed in every window
     * @param nowMillis the time of the check, or {@link #STORE_TIME}
     */
    public StoreRequest(String subject, List<Window> windows, int permits, long nowMillis) {
        this(List.of(new Scope(subject, windows)), permits, nowMillis);
    }

    /**
     * Returns the subject of the first scope: the user whose check this is.
     *
     * @return the requesting subject
     */
    public String subject() {
        return scopes.get(0).subject();
    }

    /**
     * Returns every window of the request in evaluation order: scope by scope, each shortest first.
     *
     * @return the windows; for a single scope, that scope's list
     */
    public List<Window> windows() {
        if (scopes.size() == 1) {
            return scopes.get(0).windows();
        }
        List<Window> all = new ArrayList<>();
        for (Scope scope : scopes) {
            all.addAll(scope.windows());
        }
        return List.copyOf(all);
    }

    /**
     * Returns the subject whose budget the window at {@code windowIndex} of {@link #windows()}
     * belongs to.
     *
     * @param windowIndex an index into {@link #windows()}
     * @return the subject of that window's scope
     * @throws IndexOutOfBoundsException if the index is out of range
     */
    public String subjectOf(int windowIndex) {
        int remaining = windowIndex;
        for (Scope scope : scopes) {
            if (remaining >= 0 && remaining < scope.windows().size()) {
                return scope.subject();
            }
            remaining -= scope.windows().size();
        }
        throw new IndexOutOfBoundsException("no window " + windowIndex + " in " + this);
    }

    /**
     * Tells whether the request carries its own time rather than asking for the store's clock.
     *
     * @return {@code true} when {@link #nowMillis()} is a timestamp
     */
    public boolean hasTime() {
        return nowMillis != STORE_TIME;
    }

    /**
     * One budget a request is charged to: a subject's windows.
     *
     * @param subject whose budget it is (a user id, or the name of a shared budget); non-empty
     * @param windows the windows, strictly ascending by length; not empty
     */
    public record Scope(String subject, List<Window> windows) {

        /**
         * Validates the scope.
         *
         * @throws NullPointerException if an argument is {@code null}
         * @throws IllegalArgumentException if the subject is empty or the windows are empty or not
         *     strictly ascending by length
         */
        public Scope {
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
        }
    }
}
