package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One validated reservation before it reaches the store, and the decision built from the answers.
 *
 * <p>Validation lives here, so that every entry point of the limiter refuses the same bad input with
 * the same message before any store I/O: {@link #ordered} and {@link #single} for windows, {@link
 * #validateUser} for the user, {@link #of} for the rest.
 */
final class Plan {

    private final @Nullable StoreRequest request;
    private final List<StoreRequest> perScope;
    private final @Nullable StoreRequest shadow;
    private final List<StoreRequest> shadowPerScope;
    private final Window shortest;

    /**
     * Splits {@code full} (every window, enforced and shadow) into the request of the enforced
     * windows and the lease, and the request of the shadow windows under an entry id of its own.
     */
    private Plan(StoreRequest full) {
        if (!anyInShadow(full)) {
            // nothing in shadow (the usual case): the request as it is
            this.request = full;
            this.perScope = split(full);
            this.shadow = null;
            this.shadowPerScope = List.of();
            this.shortest = full.scopes().get(0).windows().get(0);
            return;
        }
        List<StoreRequest.Scope> enforced = new ArrayList<>(full.scopes().size());
        List<StoreRequest.Scope> shadows = new ArrayList<>(1);
        StoreRequest.Lease lease = full.lease();
        for (StoreRequest.Scope scope : full.scopes()) {
            List<Window> on = new ArrayList<>(scope.windows().size());
            List<Window> off = new ArrayList<>(1);
            for (Window window : scope.windows()) {
                (window.inShadow() ? off : on).add(window);
            }
            if (!on.isEmpty() || (lease != null && lease.isIn(scope))) {
                enforced.add(off.isEmpty() ? scope : new StoreRequest.Scope(scope.subject(), on, scope.shared()));
            }
            if (!off.isEmpty()) {
                shadows.add(new StoreRequest.Scope(scope.subject(), off, scope.shared()));
            }
        }
        this.request = enforced.isEmpty()
                ? null
                : shadows.isEmpty()
                        ? full
                        : new StoreRequest(enforced, full.amounts(), full.entryId(), full.nowMillis(), lease);
        this.perScope = request == null ? List.of() : split(request);
        // its own entry id: a scope's settled set marks entry ids, and the shadow part settles apart
        this.shadow = shadows.isEmpty()
                ? null
                : new StoreRequest(shadows, full.amounts(), full.entryId() + ".s", full.nowMillis(), null);
        this.shadowPerScope = shadow == null ? List.of() : split(shadow);
        List<Window> user = full.scopes().get(0).windows();
        Window first = user.get(0);
        for (Window window : user) {
            if (!window.inShadow()) {
                first = window;
                break;
            }
        }
        this.shortest = first;
    }

    private static boolean anyInShadow(StoreRequest full) {
        for (StoreRequest.Scope scope : full.scopes()) {
            if (scope.windows().isEmpty()) {
                return true; // a scope holding only a lease: the general split below
            }
            for (Window window : scope.windows()) {
                if (window.inShadow()) {
                    return true;
                }
            }
        }
        return false;
    }

    private static List<StoreRequest> split(StoreRequest request) {
        if (request.scopes().size() == 1) {
            return List.of(request);
        }
        List<StoreRequest> split = new ArrayList<>(request.scopes().size());
        for (StoreRequest.Scope scope : request.scopes()) {
            StoreRequest.Lease lease = request.lease();
            split.add(new StoreRequest(
                    List.of(scope),
                    request.amounts(),
                    request.entryId(),
                    request.nowMillis(),
                    lease != null && lease.isIn(scope) ? lease : null));
        }
        return List.copyOf(split);
    }

    /**
     * Validates the user, the amounts and the shared budgets, and builds the request; {@code windows}
     * are already ordered. The time is read only once the arguments are valid.
     */
    static Plan of(
            String userId,
            List<Window> windows,
            @Nullable Amounts amounts,
            @Nullable List<SharedBudget> shared,
            LongSupplier nowMillis) {
        return of(userId, windows, amounts, shared, null, nowMillis);
    }

    /** {@link #of(String, List, Amounts, List, LongSupplier)} taking a lease of the user's scope too. */
    static Plan of(
            String userId,
            List<Window> windows,
            @Nullable Amounts amounts,
            @Nullable List<SharedBudget> shared,
            @Nullable Concurrency concurrency,
            LongSupplier nowMillis) {
        validateUser(userId);
        if (amounts == null) {
            throw new NullPointerException("estimate must not be null");
        }
        if (shared == null) {
            throw new NullPointerException("shared must not be null");
        }
        long now = nowMillis.getAsLong();
        List<StoreRequest.Scope> scopes = new ArrayList<>(1 + shared.size());
        scopes.add(StoreRequest.Scope.user(userId, windows));
        Set<String> names = shared.isEmpty() ? Set.of() : new HashSet<>();
        for (SharedBudget budget : shared) {
            if (budget == null) {
                throw new NullPointerException("shared must not contain null");
            }
            if (!names.add(budget.name())) {
                throw new IllegalArgumentException(
                        "shared must not name a budget twice, found '" + budget.name() + "' twice");
            }
            scopes.add(StoreRequest.Scope.shared(budget.name(), ordered(budget.windows(), "shared windows")));
        }
        StoreRequest.Lease lease = concurrency == null ? null : lease(userId, concurrency);
        return new Plan(new StoreRequest(scopes, amounts, EntryIds.next(), now, lease));
    }

    /** The lease of the user's scope that a concurrency cap takes. */
    static StoreRequest.Lease lease(String userId, Concurrency concurrency) {
        return new StoreRequest.Lease(
                userId, false, concurrency.maxConcurrent(), concurrency.lease().toMillis());
    }

    /** Refuses a null or empty user id. */
    static void validateUser(@Nullable String userId) {
        if (userId == null) {
            throw new NullPointerException("userId must not be null");
        }
        if (userId.isEmpty()) {
            throw new IllegalArgumentException("userId must not be empty");
        }
    }

    /** The one window of {@code check(userId, limit, window)}, its errors naming those arguments. */
    static List<Window> single(long limit, @Nullable Duration window) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be at least 1, was " + limit);
        }
        if (window == null) {
            throw new NullPointerException("window must not be null");
        }
        try {
            return List.of(Window.of(limit, window));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(String.valueOf(e.getMessage()).replaceFirst("^length", "window"), e);
        }
    }

    /**
     * The windows shortest first, refusing null, empty, and two windows of one unit over one length;
     * errors name {@code argument}.
     */
    static List<Window> ordered(@Nullable List<Window> windows, String argument) {
        if (windows == null) {
            throw new NullPointerException(argument + " must not be null");
        }
        if (windows.isEmpty()) {
            throw new IllegalArgumentException(argument + " must not be empty");
        }
        if (windows.size() == 1) {
            Window only = windows.get(0);
            if (only == null) {
                throw new NullPointerException(argument + " must not contain null");
            }
            return List.of(only);
        }
        List<Window> sorted = new ArrayList<>(windows.size());
        for (Window window : windows) {
            if (window == null) {
                throw new NullPointerException(argument + " must not contain null");
            }
            sorted.add(window);
        }
        sorted.sort(StoreRequest.WINDOW_ORDER);
        for (int i = 1; i < sorted.size(); i++) {
            if (StoreRequest.WINDOW_ORDER.compare(sorted.get(i - 1), sorted.get(i)) == 0) {
                Window twice = sorted.get(i);
                Window.Calendar calendar = twice.calendar();
                throw new IllegalArgumentException(argument + " must not hold two windows counting "
                        + twice.unit().name().toLowerCase(Locale.ROOT)
                        + " over the same length, found "
                        + (calendar != null ? "a calendar " + calendar.period() : twice.length()) + " twice");
            }
        }
        return List.copyOf(sorted);
    }

    /**
     * The request of the enforced windows (and the lease): what the store decides; {@code null} when
     * every window is in shadow and no lease is taken.
     */
    @Nullable
    StoreRequest request() {
        return request;
    }

    /**
     * The request the rejection cache answers for: the enforced request when it is the user's (its
     * first scope the user's own), else {@code null}.
     */
    @Nullable
    StoreRequest cacheable() {
        return request != null && !request.scopes().get(0).shared() ? request : null;
    }

    List<StoreRequest> perScope() {
        return perScope;
    }

    Amounts amounts() {
        return (request != null ? request : java.util.Objects.requireNonNull(shadow)).amounts();
    }

    /**
     * The store calls this reservation takes, in order: the whole request when it has one scope or
     * the store evaluates several atomically, else one request per scope, the user's first; none
     * when every window is in shadow.
     */
    List<StoreRequest> calls(WindowStore store) {
        return calls(request, perScope, store);
    }

    /**
     * The store calls of the shadow windows, made once the enforced ones admitted the request, as
     * {@link #calls} splits them; none when no window is in shadow.
     */
    List<StoreRequest> shadowCalls(WindowStore store) {
        return calls(shadow, shadowPerScope, store);
    }

    private static List<StoreRequest> calls(@Nullable StoreRequest whole, List<StoreRequest> split, WindowStore store) {
        if (whole == null || split.size() == 1 || !store.atomicAcrossScopes()) {
            return split;
        }
        return List.of(whole);
    }

    /** Whether some window is in shadow: its calls come once the enforced ones admitted. */
    boolean hasShadow() {
        return shadow != null;
    }

    /**
     * The shortest enforced window of the user's (the shortest shadow one when all are in shadow):
     * what a degraded decision names.
     */
    Window shortest() {
        return shortest;
    }

    /**
     * The shadow window a request asks more of than its limit, which would refuse it for good had it
     * been enforced: then no shadow call is made, as an enforced window too small records nothing.
     */
    Decision.@Nullable ShadowRefusal shadowTooLarge() {
        if (shadow == null) {
            return null;
        }
        for (StoreRequest.Scope scope : shadow.scopes()) {
            for (Window window : scope.windows()) {
                if (!window.countsRequests() && shadow.weightIn(window) > window.limit()) {
                    return new Decision.ShadowRefusal(window, budgetOf(scope), true);
                }
            }
        }
        return null;
    }

    /** The shadow refusal a shadow call's rejection stands for. */
    static Decision.ShadowRefusal shadowRefusal(StoreRequest refused, Evaluation refusal) {
        int index = refusal.rejectedIndex();
        return new Decision.ShadowRefusal(
                refused.windows().get(index), budgetOf(refused.scopeOf(index)), refusal.isTooLarge());
    }

    /**
     * The decision for a request that asks more of a unit than a window of it allows: no store call
     * needed.
     */
    @Nullable
    Decision tooLarge() {
        if (request == null) {
            return null;
        }
        for (StoreRequest.Scope scope : request.scopes()) {
            for (Window window : scope.windows()) {
                if (!window.countsRequests() && request.weightIn(window) > window.limit()) {
                    return new Decision(
                            false,
                            window.limit(),
                            0,
                            Duration.ZERO,
                            window,
                            Duration.ZERO,
                            false,
                            budgetOf(scope),
                            true,
                            List.of());
                }
            }
        }
        return null;
    }

    /**
     * Builds the decision from the parts the store admitted and, when one was refused, the refused
     * request and its evaluation.
     */
    Decision decide(List<HeldReservation.Part> admitted, @Nullable StoreRequest refused, @Nullable Evaluation refusal) {
        List<Decision.Usage> usage = new ArrayList<>();
        for (HeldReservation.Part part : admitted) {
            addUsage(usage, part.request(), part.evaluation());
        }
        if (refused != null && refusal != null && refusal.isLeaseRefused()) {
            addUsage(usage, refused, refusal);
            Window window = shortest;
            Duration reset = shortest.inShadow()
                    ? Duration.ZERO
                    : usageOf(refused, refusal, 0).resetAfter();
            return new Decision(false, window.limit(), 0, Duration.ZERO, window, reset, false, null, false, usage);
        }
        if (refused != null && refusal != null) {
            int index = refusal.rejectedIndex();
            Decision.Usage rejecting = usageOf(refused, refusal, index);
            addUsage(usage, refused, refusal);
            Window window = rejecting.window();
            Duration retry = Duration.ofMillis(refusal.retryAfterMillis());
            return new Decision(
                    false,
                    window.limit(),
                    0,
                    refusal.isTooLarge() ? Duration.ZERO : retry,
                    window,
                    refusal.isTooLarge() ? rejecting.resetAfter() : retry,
                    false,
                    rejecting.budget(),
                    refusal.isTooLarge(),
                    usage);
        }
        Decision.Usage best = deciding(usage, true);
        if (best == null) {
            best = deciding(usage, false);
        }
        if (best == null) {
            // every window of the user's is in shadow: nothing of theirs was enforced
            return new Decision(
                    true,
                    shortest.limit(),
                    shortest.limit(),
                    Duration.ZERO,
                    shortest,
                    Duration.ZERO,
                    false,
                    null,
                    false,
                    usage);
        }
        Window window = best.window();
        return new Decision(
                true,
                window.limit(),
                Math.min(window.limit(), best.remaining()),
                Duration.ZERO,
                window,
                best.resetAfter(),
                false,
                null,
                false,
                usage);
    }

    /**
     * The user's request window (or, with {@code requests} false, window of any other unit) with the
     * least remaining; ties keep the first (the shortest).
     */
    private static Decision.@Nullable Usage deciding(List<Decision.Usage> usage, boolean requests) {
        Decision.Usage best = null;
        for (Decision.Usage candidate : usage) {
            if (candidate.budget() == null
                    && candidate.window().countsRequests() == requests
                    && (best == null || candidate.remaining() < best.remaining())) {
                best = candidate;
            }
        }
        return best;
    }

    /** Adds the windows the store evaluated; those it left alone after a rejection are unknown, so absent. */
    private static void addUsage(List<Decision.Usage> usage, StoreRequest request, Evaluation evaluation) {
        for (int i = 0; i < evaluation.size(); i++) {
            if (evaluation.evaluated(i)) {
                usage.add(usageOf(request, evaluation, i));
            }
        }
    }

    private static Decision.Usage usageOf(StoreRequest request, Evaluation evaluation, int index) {
        return new Decision.Usage(
                request.windows().get(index),
                budgetOf(request.scopeOf(index)),
                evaluation.used(index),
                Duration.ofMillis(evaluation.resetAfterMillis(index)));
    }

    private static @Nullable String budgetOf(StoreRequest.Scope scope) {
        return scope.shared() ? scope.subject() : null;
    }
}
