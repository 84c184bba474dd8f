package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link WindowStore} evaluates in one atomic step: the windows of one or more scopes, the
 * amounts the request reserves (tokens, spend, any unit), the entry id that names what it records,
 * and the time of the check.
 *
 * <p>A check of one user has one {@link Scope}: the user's windows. Further scopes charge the same
 * request, in the same atomic step and all or nothing, to budgets shared by many users (an upstream
 * provider's cap, say). Windows are evaluated in {@link #windows()} order: scope by scope, each
 * scope's windows in {@link #WINDOW_ORDER}; {@link Evaluation} indices refer to that order.
 *
 * <p>The request is validated on construction; stores may rely on its invariants: at least one
 * scope, distinct scopes, each with a non-empty subject and a list of windows in strictly ascending
 * {@link #WINDOW_ORDER} that is empty only in the scope holding the request's lease (a concurrency
 * cap over a user whose windows are all in shadow), non-negative amounts, and a non-empty entry id.
 *
 * @param scopes the budgets charged, the requesting user's first
 * @param amounts the amount of each unit reserved: a window counts its unit's amount ({@link
 *     #weightIn}); request windows count 1
 * @param entryId the name of what the request records, unique among all requests of all processes;
 *     a later {@link Settlement} names it again
 * @param nowMillis the time of the check in epoch milliseconds, or {@link #STORE_TIME} to use the
 *     store's own clock
 * @param lease a concurrency lease the request also takes in the same atomic step, or {@code null}:
 *     see {@link Lease}
 */
public record StoreRequest(
        List<Scope> scopes,
        Amounts amounts,
        String entryId,
        long nowMillis,
        @Nullable Lease lease) {

    /** The {@link #nowMillis()} value that asks the store to use its own clock. */
    public static final long STORE_TIME = Long.MIN_VALUE;

    /**
     * The order of windows within a scope: by length (a calendar window's is its period's nominal
     * length), at equal length by {@linkplain Window.Unit#compareTo unit} (requests, then tokens, then
     * other units by name), at equal length and unit the sliding window before the calendar one, and
     * then the enforced window before its {@linkplain Window#inShadow() shadow} twin. Each position
     * holds one log, so no two windows of a scope may compare equal.
     */
    public static final Comparator<Window> WINDOW_ORDER = Comparator.comparing(Window::length)
            .thenComparing(Window::unit)
            .thenComparing(Window::isCalendar)
            .thenComparing(Window::inShadow);

    /**
     * Validates the invariants stores rely on.
     *
     * @param scopes the budgets charged, the requesting user's first
     * @param amounts the amount of each unit reserved: a window counts its unit's amount ({@link
     *     #weightIn}); request windows count 1
     * @param entryId the name of what the request records, unique among all requests of all processes;
     *     a later {@link Settlement} names it again
     * @param nowMillis the time of the check in epoch milliseconds, or {@link #STORE_TIME} to use the
     *     store's own clock
     * @param lease a concurrency lease the request also takes in the same atomic step, or {@code null}:
     *     see {@link Lease}
     * @throws NullPointerException if an argument or a scope is {@code null}
     * @throws IllegalArgumentException if an invariant does not hold
     */
    public StoreRequest {
        scopes = List.copyOf(Objects.requireNonNull(scopes, "scopes must not be null"));
        Objects.requireNonNull(amounts, "amounts must not be null");
        Objects.requireNonNull(entryId, "entryId must not be null");
        if (scopes.isEmpty()) {
            throw new IllegalArgumentException("scopes must not be empty");
        }
        if (scopes.size() > 1) {
            Set<String> distinct = new HashSet<>();
            for (Scope scope : scopes) {
                if (!distinct.add((scope.shared() ? "shared:" : "user:") + scope.subject())) {
                    throw new IllegalArgumentException(
                            "scopes must be distinct, '" + scope.subject() + "' appears twice");
                }
            }
        }
        if (entryId.isEmpty()) {
            throw new IllegalArgumentException("entryId must not be empty");
        }
        if (nowMillis != STORE_TIME && nowMillis < 0) {
            throw new IllegalArgumentException("nowMillis must not be negative, was " + nowMillis);
        }
        if (lease != null && !lease.heldIn(scopes)) {
            throw new IllegalArgumentException("the lease's scope '" + lease.subject() + "' is none of the request's");
        }
        for (Scope scope : scopes) {
            if (scope.windows().isEmpty() && (lease == null || !lease.isIn(scope))) {
                throw new IllegalArgumentException("windows of scope '" + scope.subject()
                        + "' must not be empty: only the scope holding the request's lease may have none");
            }
        }
    }

    /**
     * Creates a request of tokens alone.
     *
     * @param scopes the budgets charged, the requesting user's first
     * @param tokens the tokens reserved, at least 0
     * @param entryId the name of what the request records
     * @param nowMillis the time of the check, or {@link #STORE_TIME}
     * @param lease a lease taken too, or {@code null}
     */
    public StoreRequest(List<Scope> scopes, long tokens, String entryId, long nowMillis, @Nullable Lease lease) {
        this(scopes, tokensOf(tokens), entryId, nowMillis, lease);
    }

    /**
     * Creates a request without a lease.
     *
     * @param scopes the budgets charged, the requesting user's first
     * @param tokens the tokens reserved
     * @param entryId the name of what the request records
     * @param nowMillis the time of the check, or {@link #STORE_TIME}
     */
    public StoreRequest(List<Scope> scopes, long tokens, String entryId, long nowMillis) {
        this(scopes, tokens, entryId, nowMillis, null);
    }

    private static Amounts tokensOf(long tokens) {
        if (tokens < 0) {
            throw new IllegalArgumentException("tokens must not be negative, was " + tokens);
        }
        return tokens == 0 ? Amounts.none() : Amounts.tokens(tokens);
    }

    /**
     * Returns this request taking {@code lease} too.
     *
     * @param lease the lease, or {@code null} for none
     * @return a request of the same scopes, amounts, entry id and time
     */
    public StoreRequest withLease(@Nullable Lease lease) {
        return new StoreRequest(scopes, amounts, entryId, nowMillis, lease);
    }

    /**
     * Creates a request with a fresh entry id.
     *
     * @param scopes the budgets charged, the requesting user's first
     * @param tokens the tokens reserved
     * @param nowMillis the time of the check, or {@link #STORE_TIME}
     */
    public StoreRequest(List<Scope> scopes, long tokens, long nowMillis) {
        this(scopes, tokens, EntryIds.next(), nowMillis);
    }

    /**
     * Creates a request of any amounts with a fresh entry id.
     *
     * @param scopes the budgets charged, the requesting user's first
     * @param amounts the amount of each unit reserved
     * @param nowMillis the time of the check, or {@link #STORE_TIME}
     */
    public StoreRequest(List<Scope> scopes, Amounts amounts, long nowMillis) {
        this(scopes, amounts, EntryIds.next(), nowMillis, null);
    }

    /**
     * Creates the request of one user's check: a single scope and a fresh entry id.
     *
     * @param subject the user id
     * @param windows the user's windows, strictly ascending in {@link #WINDOW_ORDER}
     * @param tokens the tokens reserved
     * @param nowMillis the time of the check, or {@link #STORE_TIME}
     */
    public StoreRequest(String subject, List<Window> windows, long tokens, long nowMillis) {
        this(List.of(Scope.user(subject, windows)), tokens, nowMillis);
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
     * Returns every window of the request in evaluation order: scope by scope.
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
     * Returns the scope the window at {@code windowIndex} of {@link #windows()} belongs to.
     *
     * @param windowIndex an index into {@link #windows()}
     * @return that window's scope
     * @throws IndexOutOfBoundsException if the index is out of range
     */
    public Scope scopeOf(int windowIndex) {
        int remaining = windowIndex;
        for (Scope scope : scopes) {
            if (remaining >= 0 && remaining < scope.windows().size()) {
                return scope;
            }
            remaining -= scope.windows().size();
        }
        throw new IndexOutOfBoundsException("no window " + windowIndex + " in " + this);
    }

    /**
     * Tells whether a store leaves a window alone once another has rejected the request: the window
     * comes later in {@link #windows()} order and is longer than the rejecting one. Its state cannot
     * change the answer, so the store runs nothing on it and reports it as {@link
     * Evaluation#NOT_EVALUATED}.
     *
     * @param rejectedIndex the index of the window that rejected (or found the request too large)
     * @param windowIndex the index of another window
     * @return {@code true} when the store must not evaluate {@code windowIndex}
     * @throws IndexOutOfBoundsException if an index is out of range
     */
    public boolean skipsAfter(int rejectedIndex, int windowIndex) {
        List<Window> windows = windows();
        return windowIndex > rejectedIndex
                && windows.get(windowIndex)
                                .length()
                                .compareTo(windows.get(rejectedIndex).length())
                        > 0;
    }

    /**
     * Returns how much the request charges a window: 1 for a request window, the amount of its unit
     * for any other (0 when the request names none).
     *
     * @param window one of the request's windows
     * @return the weight
     */
    public long weightIn(Window window) {
        return window.countsRequests() ? 1 : amounts.get(window.unit());
    }

    /**
     * Returns the tokens the request reserves.
     *
     * @return the amount of {@link Window.Unit#TOKENS}, 0 when none
     */
    public long tokens() {
        return amounts.get(Window.Unit.TOKENS);
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
     * <p>A user's scope and a shared scope of the same name are different budgets: stores keep
     * them apart so no user id can reach a shared budget's counts.
     *
     * @param subject whose budget it is: a user id, or the name of a shared budget; non-empty
     * @param windows the windows, strictly ascending in {@link #WINDOW_ORDER}; empty only in the
     *     scope that holds its request's lease
     * @param shared {@code true} for a budget shared by many users
     */
    public record Scope(String subject, List<Window> windows, boolean shared) {

        /**
         * Validates the scope.
         *
         * @param subject whose budget it is: a user id, or the name of a shared budget; non-empty
         * @param windows the windows, strictly ascending in {@link #WINDOW_ORDER}; empty only in the
         *     scope that holds its request's lease
         * @param shared {@code true} for a budget shared by many users
         * @throws NullPointerException if an argument is {@code null}
         * @throws IllegalArgumentException if the subject is empty or the windows are not strictly
         *     ascending
         */
        public Scope {
            Objects.requireNonNull(subject, "subject must not be null");
            if (subject.isEmpty()) {
                throw new IllegalArgumentException("subject must not be empty");
            }
            windows = List.copyOf(Objects.requireNonNull(windows, "windows must not be null"));
            for (int i = 1; i < windows.size(); i++) {
                if (WINDOW_ORDER.compare(windows.get(i - 1), windows.get(i)) >= 0) {
                    throw new IllegalArgumentException(
                            "windows must be strictly ascending by length, request windows before token windows");
                }
            }
        }

        /**
         * Creates a user's scope.
         *
         * @param subject the user id
         * @param windows the user's windows in {@link #WINDOW_ORDER}
         * @return the scope
         */
        public static Scope user(String subject, List<Window> windows) {
            return new Scope(subject, windows, false);
        }

        /**
         * Creates a shared budget's scope.
         *
         * @param name the budget's name
         * @param windows the budget's windows in {@link #WINDOW_ORDER}
         * @return the scope
         */
        public static Scope shared(String name, List<Window> windows) {
            return new Scope(name, windows, true);
        }
    }

    /**
     * A concurrency lease: a slot among at most {@code cap} held at once in one of the request's
     * scopes, named by the request's entry id, taken in the same atomic step as the windows.
     *
     * <p>For a request with a lease, after evaluating every window (step 2 of {@link WindowStore}):
     * when the windows admit the request, the store drops the scope's leases whose time has passed,
     * and when {@code cap} are still held it records nothing anywhere and answers {@link
     * Evaluation#leaseRefused}; otherwise it records the request in every window and the lease,
     * held until {@code now + ttlMillis}. A request a window rejects takes no lease. A lease is
     * released by the settlement that names it ({@link Settlement#lease()}), in the same atomic step:
     * exactly once (a second release, or the release of a lease that expired, frees nothing), and
     * renewed while held by {@link WindowStore#renewLease}; a lease its holder stops renewing is
     * dropped once its time passes. A scope's leases are their own state: they share nothing with
     * its windows' logs, and a user's and a shared budget's leases of one name stay apart.
     *
     * @param subject the subject of the scope that holds the lease
     * @param shared whether that scope is a shared budget
     * @param cap the most leases held at once in that scope; at least 1
     * @param ttlMillis how long a lease lives without renewal; at least 1
     */
    public record Lease(String subject, boolean shared, int cap, long ttlMillis) {

        /**
         * Validates the lease.
         *
         * @param subject the subject of the scope that holds the lease
         * @param shared whether that scope is a shared budget
         * @param cap the most leases held at once in that scope; at least 1
         * @param ttlMillis how long a lease lives without renewal; at least 1
         * @throws NullPointerException if the subject is {@code null}
         * @throws IllegalArgumentException if the subject is empty, or the cap or ttl below 1
         */
        public Lease {
            Objects.requireNonNull(subject, "subject must not be null");
            if (subject.isEmpty()) {
                throw new IllegalArgumentException("subject must not be empty");
            }
            if (cap < 1) {
                throw new IllegalArgumentException("cap must be at least 1, was " + cap);
            }
            if (ttlMillis < 1) {
                throw new IllegalArgumentException("ttlMillis must be at least 1, was " + ttlMillis);
            }
        }

        /**
         * Tells whether {@code scope} is the scope that holds this lease.
         *
         * @param scope a scope
         * @return {@code true} when subject and kind match
         */
        public boolean isIn(Scope scope) {
            return scope.shared() == shared && scope.subject().equals(subject);
        }

        boolean heldIn(List<Scope> scopes) {
            for (Scope scope : scopes) {
                if (isIn(scope)) {
                    return true;
                }
            }
            return false;
        }
    }
}
