package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The limiter that {@link SlidingWindowRateLimiter.Builder#build()} returns: the store calls of a
 * {@link Plan} and the answers that need none (kill switch, a request too large, a cached rejection).
 * The blocking and asynchronous paths share everything but the way they wait for the store.
 */
final class Limiter implements RateLimiter {

    private static final String NO_TIER = "none";

    private final StoreGuard guard;
    private final @Nullable Clock clock;
    private final boolean disabled;
    private final Recorder metrics;
    private final @Nullable RejectionCache rejections;
    private final LongSupplier clockMillis = this::now;
    private final BudgetLeases leases;

    Limiter(
            StoreGuard guard,
            @Nullable Clock clock,
            boolean disabled,
            Recorder metrics,
            @Nullable RejectionCache rejections) {
        this.guard = guard;
        this.clock = clock;
        this.disabled = disabled;
        this.metrics = metrics;
        this.rejections = rejections;
        this.leases = new BudgetLeases(guard, clock);
    }

    @Override
    public Decision check(String userId, long limit, Duration window) {
        return reserveNow(start(userId, Plan.single(limit, window), Amounts.none(), List.of(), null, NO_TIER))
                .decision();
    }

    @Override
    public Decision check(String userId, List<Window> windows) {
        return reserveNow(start(userId, Plan.ordered(windows, "windows"), Amounts.none(), List.of(), null, NO_TIER))
                .decision();
    }

    @Override
    public Decision check(String userId, Tier tier) {
        Objects.requireNonNull(tier, "tier must not be null");
        return reserveNow(start(
                        userId, Plan.ordered(tier.windows(), "tier"), Amounts.none(), List.of(), null, tier.name()))
                .decision();
    }

    @Override
    public CompletionStage<Decision> checkAsync(String userId, long limit, Duration window) {
        return reserveLater(start(userId, Plan.single(limit, window), Amounts.none(), List.of(), null, NO_TIER))
                .thenApply(Reservation::decision);
    }

    @Override
    public CompletionStage<Decision> checkAsync(String userId, List<Window> windows) {
        return reserveLater(start(userId, Plan.ordered(windows, "windows"), Amounts.none(), List.of(), null, NO_TIER))
                .thenApply(Reservation::decision);
    }

    @Override
    public CompletionStage<Decision> checkAsync(String userId, Tier tier) {
        Objects.requireNonNull(tier, "tier must not be null");
        return reserveLater(start(
                        userId, Plan.ordered(tier.windows(), "tier"), Amounts.none(), List.of(), null, tier.name()))
                .thenApply(Reservation::decision);
    }

    @Override
    public Reservation reserve(String userId, Tier tier, Amounts estimate, List<SharedBudget> shared) {
        Objects.requireNonNull(tier, "tier must not be null");
        if (!disabled && BudgetLeases.anyLeased(shared, estimate)) {
            return leases.reserve(shared, estimate, rest -> reserve(userId, tier, estimate, rest));
        }
        return reserveNow(start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, null, tier.name()));
    }

    @Override
    public Reservation reserve(
            String userId, Tier tier, Amounts estimate, List<SharedBudget> shared, Concurrency concurrency) {
        Objects.requireNonNull(tier, "tier must not be null");
        Objects.requireNonNull(concurrency, "concurrency must not be null");
        if (!disabled && BudgetLeases.anyLeased(shared, estimate)) {
            return leases.reserve(shared, estimate, rest -> reserve(userId, tier, estimate, rest, concurrency));
        }
        return reserveNow(
                start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, concurrency, tier.name()));
    }

    @Override
    public Reservation restore(String receipt) {
        Objects.requireNonNull(receipt, "receipt must not be null");
        Receipts.Read read = Receipts.read(receipt);
        List<HeldReservation.Part> parts = new ArrayList<>(read.requests().size());
        for (StoreRequest request : read.requests()) {
            int windows = request.windows().size();
            parts.add(new HeldReservation.Part(
                    request, Evaluation.allowed(request.nowMillis(), new long[windows], new long[windows])));
        }
        Window first = read.requests().get(0).scopes().get(0).windows().get(0);
        Decision decision = Decision.allow(first, first.limit(), Duration.ZERO);
        return new HeldReservation(decision, parts, read.estimate(), guard, clockMillis);
    }

    @Override
    public void returnLeases() {
        leases.returnAll();
    }

    @Override
    public List<Leasing.Held> leases() {
        return leases.held();
    }

    @Override
    public boolean awaitSettlements(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout must not be null");
        return guard.awaitSettlements(timeout);
    }

    @Override
    public long inFlight(String userId) {
        Plan.validateUser(userId);
        if (disabled) {
            return 0;
        }
        return guard.leasesHeld(Plan.lease(userId, Concurrency.of(1)), now());
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(
            String userId, Tier tier, Amounts estimate, List<SharedBudget> shared) {
        Objects.requireNonNull(tier, "tier must not be null");
        if (!disabled && BudgetLeases.anyLeased(shared, estimate)) {
            return leases.reserveAsync(shared, estimate, rest -> reserveAsync(userId, tier, estimate, rest));
        }
        return reserveLater(start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, null, tier.name()));
    }

    @Override
    public CompletionStage<Reservation> reserveAsync(
            String userId, Tier tier, Amounts estimate, List<SharedBudget> shared, Concurrency concurrency) {
        Objects.requireNonNull(tier, "tier must not be null");
        Objects.requireNonNull(concurrency, "concurrency must not be null");
        if (!disabled && BudgetLeases.anyLeased(shared, estimate)) {
            return leases.reserveAsync(
                    shared, estimate, rest -> reserveAsync(userId, tier, estimate, rest, concurrency));
        }
        return reserveLater(
                start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, concurrency, tier.name()));
    }

    @Override
    public List<Decision.Usage> usage(String userId, Tier tier) {
        Plan.validateUser(userId);
        Objects.requireNonNull(tier, "tier must not be null");
        return usageOf(StoreRequest.Scope.user(userId, Plan.ordered(tier.windows(), "tier")));
    }

    @Override
    public List<Decision.Usage> usage(SharedBudget budget) {
        Objects.requireNonNull(budget, "budget must not be null");
        return usageOf(StoreRequest.Scope.shared(budget.name(), Plan.ordered(budget.windows(), "budget")));
    }

    private List<Decision.Usage> usageOf(StoreRequest.Scope scope) {
        if (disabled) {
            return List.of();
        }
        StoreRequest request = new StoreRequest(List.of(scope), Amounts.none(), now());
        Evaluation evaluation = guard.peek(request);
        List<Decision.Usage> usage = new ArrayList<>(scope.windows().size());
        for (int i = 0; i < scope.windows().size(); i++) {
            usage.add(new Decision.Usage(
                    scope.windows().get(i),
                    scope.shared() ? scope.subject() : null,
                    evaluation.used(i),
                    Duration.ofMillis(evaluation.resetAfterMillis(i))));
        }
        return List.copyOf(usage);
    }

    private Reservation reserveNow(Start start) {
        Reservation answer = start.answer();
        if (answer != null) {
            return answer;
        }
        long began = System.nanoTime();
        return recorded(start, stepwise(start.plan()), began);
    }

    private CompletionStage<Reservation> reserveLater(Start start) {
        Reservation answer = start.answer();
        if (answer != null) {
            return CompletableFuture.completedFuture(answer);
        }
        long began = System.nanoTime();
        return stepwiseAsync(start.plan()).thenApply(reservation -> recorded(start, reservation, began));
    }

    /**
     * A reservation validated and, where no store call is needed, already answered.
     *
     * @param tick the rejection cache's clock before the store call, for {@link RejectionCache#remember}
     * @param cancels the rejection cache's count of cancels before the store call
     */
    private record Start(Plan plan, String tier, @Nullable Reservation answer, long tick, long cancels) {}

    /** Validates the request, then answers it without a store call where that is the answer. */
    private Start start(
            String userId,
            List<Window> windows,
            @Nullable Amounts amounts,
            List<SharedBudget> shared,
            @Nullable Concurrency concurrency,
            String tier) {
        RejectionCache cache = rejections;
        long tick = cache == null ? 0 : cache.tick();
        long cancels = cache == null ? 0 : cache.cancels();
        Plan plan = Plan.of(userId, windows, amounts, shared, concurrency, clockMillis);
        Reservation answer = null;
        if (disabled) {
            answer = HeldReservation.none(metrics.recordDisabled(tier, disabledDecision(windows)));
        } else {
            Decision early = plan.tooLarge();
            if (early != null) {
                answer = HeldReservation.none(metrics.record(tier, early, 0));
            } else {
                StoreRequest cacheable = plan.cacheable();
                Decision cached = cache == null || cacheable == null ? null : cache.lookup(cacheable);
                if (cached != null) {
                    answer = HeldReservation.none(metrics.recordCached(tier, cached));
                }
            }
        }
        return new Start(plan, tier, answer, tick, cancels);
    }

    /** Counts the decision the store calls led to and lets the rejection cache learn from it. */
    private Reservation recorded(Start start, Reservation reservation, long began) {
        metrics.record(start.tier(), reservation.decision(), System.nanoTime() - began);
        RejectionCache cache = rejections;
        StoreRequest cacheable = start.plan().cacheable();
        if (cache != null && cacheable != null) {
            cache.remember(cacheable, reservation.decision(), start.tick(), start.cancels());
        }
        return reservation;
    }

    /**
     * Makes the plan's store calls one after another: one call when the store takes all scopes at
     * once, else one per scope, the user's first (Redis Cluster). Each call is all or nothing on its
     * own, so no budget ever admits more than its limit; when a scope rejects or the store fails,
     * what the earlier scopes reserved is cancelled before the answer, so the caller's next request
     * never finds them still charged. The price is one round trip per scope, and a rejection by a
     * later scope briefly holds the earlier scopes' reservation until its cancel lands. Once the
     * enforced windows admitted the request, the shadow windows' calls are made the same way.
     */
    private Reservation stepwise(Plan plan) {
        List<StoreRequest> calls = plan.calls(guard.store());
        if (calls.size() == 1 && !plan.hasShadow()) {
            // one store call and nothing in shadow (a plain check): no run of steps to keep
            StoreRequest request = calls.get(0);
            Evaluation evaluation;
            try {
                evaluation = guard.evaluate(request);
            } catch (StoreGuard.Unavailable e) {
                return stopped(plan, request, List.of(), null, e);
            }
            return answered(plan, request, evaluation);
        }
        Steps enforced = steps(plan, calls);
        StoreRequest stopped = enforced.stopped();
        if (stopped != null) {
            return stopped(plan, stopped, enforced.held(), enforced.evaluation(), enforced.failure());
        }
        Decision.ShadowRefusal tooLarge = plan.shadowTooLarge();
        Steps shadow = tooLarge != null ? Steps.NONE : steps(plan, plan.shadowCalls(guard.store()));
        return admitted(plan, enforced.held(), shadow, tooLarge);
    }

    /** {@link #stepwise} without blocking. */
    private CompletionStage<Reservation> stepwiseAsync(Plan plan) {
        List<StoreRequest> calls = plan.calls(guard.store());
        if (calls.size() == 1 && !plan.hasShadow()) {
            StoreRequest request = calls.get(0);
            return guard.evaluateAsync(request)
                    .handle((evaluation, failure) -> failure == null
                            ? answered(plan, request, evaluation)
                            : stopped(plan, request, List.of(), null, failure));
        }
        return stepsAsync(plan, calls, 0, new ArrayList<>()).thenCompose(enforced -> {
            StoreRequest stopped = enforced.stopped();
            if (stopped != null) {
                return enforced.cancel()
                        .thenApply(done ->
                                stopped(plan, stopped, enforced.held(), enforced.evaluation(), enforced.failure()));
            }
            Decision.ShadowRefusal tooLarge = plan.shadowTooLarge();
            if (tooLarge != null) {
                return CompletableFuture.completedFuture(admitted(plan, enforced.held(), Steps.NONE, tooLarge));
            }
            return stepsAsync(plan, plan.shadowCalls(guard.store()), 0, new ArrayList<>())
                    .thenCompose(shadow -> shadow.cancel().thenApply(done -> shadow))
                    .thenApply(shadow -> admitted(plan, enforced.held(), shadow, null));
        });
    }

    /**
     * The outcome of a run of store calls: what the calls that admitted hold (cancelled again when a
     * later call stopped the run), and the call that stopped it (a rejection or a failure) with its
     * answer, or {@code null} when all admitted. {@code cancel} completes once what the earlier calls
     * held is cancelled after a stop.
     */
    private record Steps(
            List<HeldReservation.Part> held,
            @Nullable StoreRequest stopped,
            @Nullable Evaluation evaluation,
            @Nullable Throwable failure,
            CompletableFuture<Void> cancel) {

        static final Steps NONE = new Steps(List.of(), null, null, null, CompletableFuture.completedFuture(null));
    }

    /**
     * Makes {@code calls} one after another, blocking; after a stop, what the earlier calls held is
     * cancelled before returning.
     */
    private Steps steps(Plan plan, List<StoreRequest> calls) {
        List<HeldReservation.Part> held = new ArrayList<>();
        for (StoreRequest request : calls) {
            Evaluation evaluation;
            try {
                evaluation = guard.evaluate(request);
            } catch (StoreGuard.Unavailable e) {
                cancel(plan, held).join();
                return new Steps(held, request, null, e, CompletableFuture.completedFuture(null));
            }
            if (!evaluation.isAllowed()) {
                cancel(plan, held).join();
                return new Steps(held, request, evaluation, null, CompletableFuture.completedFuture(null));
            }
            held.add(new HeldReservation.Part(request, evaluation));
        }
        return new Steps(held, null, null, null, CompletableFuture.completedFuture(null));
    }

    /** {@link #steps} without blocking: the call {@code next} once the earlier ones admitted. */
    private CompletionStage<Steps> stepsAsync(
            Plan plan, List<StoreRequest> calls, int next, List<HeldReservation.Part> held) {
        if (next == calls.size()) {
            return CompletableFuture.completedFuture(
                    new Steps(held, null, null, null, CompletableFuture.completedFuture(null)));
        }
        StoreRequest request = calls.get(next);
        return guard.evaluateAsync(request)
                .handle((evaluation, failure) -> {
                    if (failure == null && evaluation.isAllowed()) {
                        held.add(new HeldReservation.Part(request, evaluation));
                        return stepsAsync(plan, calls, next + 1, held);
                    }
                    return CompletableFuture.completedFuture(
                            new Steps(held, request, evaluation, failure, cancel(plan, held)));
                })
                .thenCompose(stage -> stage);
    }

    /** The answer of a reservation's only store call, with nothing in shadow. */
    private Reservation answered(Plan plan, StoreRequest request, Evaluation evaluation) {
        if (!evaluation.isAllowed()) {
            return stopped(plan, request, List.of(), evaluation, null);
        }
        return admitted(plan, List.of(new HeldReservation.Part(request, evaluation)), Steps.NONE, null);
    }

    /** Cancels what earlier calls of a stepwise reservation hold; nothing to do before the first admits. */
    private CompletableFuture<Void> cancel(Plan plan, List<HeldReservation.Part> held) {
        if (held.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return HeldReservation.cancelAll(guard, held, plan.amounts(), now());
    }

    /**
     * The answer when the store call for {@code request} failed or rejected: the failure policy for a
     * failure, else the rejection, naming what the earlier scopes had admitted.
     */
    private Reservation stopped(
            Plan plan,
            StoreRequest request,
            List<HeldReservation.Part> before,
            @Nullable Evaluation evaluation,
            @Nullable Throwable failure) {
        if (failure != null || evaluation == null) {
            Throwable cause = failure == null ? null : StoreGuard.unwrap(failure);
            if (cause instanceof StoreGuard.Unavailable unavailable) {
                guard.cancelInDoubt(request, unavailable);
                return HeldReservation.none(guard.onUnavailable(
                        java.util.Objects.requireNonNull(plan.request()), unavailable, now(), plan.shortest()));
            }
            if (cause instanceof RuntimeException e) {
                throw e;
            }
            throw new IllegalStateException(cause);
        }
        Decision decision = plan.decide(before, request, evaluation);
        return evaluation.isLeaseRefused()
                ? HeldReservation.concurrencyLimited(decision)
                : HeldReservation.none(decision);
    }

    /**
     * The reservation every enforced call admitted: it holds their entries, and those of the shadow
     * calls that admitted, until commit or cancel. A shadow call that the store could not answer
     * counts nothing and refuses nothing (what it may have recorded is cancelled in doubt), and a
     * shadow call's rejection names its window among the decision's shadow refusals.
     */
    private Reservation admitted(
            Plan plan, List<HeldReservation.Part> held, Steps shadow, Decision.@Nullable ShadowRefusal tooLarge) {
        Decision decision = plan.decide(held, null, null);
        List<HeldReservation.Part> parts = held;
        StoreRequest stopped = shadow.stopped();
        Evaluation evaluation = shadow.evaluation();
        if (tooLarge != null) {
            decision = decision.withShadowRefusals(List.of(tooLarge));
        } else if (stopped != null && evaluation != null) {
            decision = decision.withShadowRefusals(List.of(Plan.shadowRefusal(stopped, evaluation)));
        } else if (stopped != null) {
            Throwable cause = shadow.failure() == null ? null : StoreGuard.unwrap(shadow.failure());
            if (cause instanceof StoreGuard.Unavailable unavailable) {
                guard.cancelInDoubt(stopped, unavailable);
            } else if (cause instanceof RuntimeException e) {
                throw e;
            }
        } else if (!shadow.held().isEmpty()) {
            parts = new ArrayList<>(held);
            parts.addAll(shadow.held());
        }
        return new HeldReservation(decision, parts, plan.amounts(), guard, clockMillis);
    }

    private long now() {
        return clock == null ? StoreRequest.STORE_TIME : clock.millis();
    }

    /**
     * What a disabled limiter answers: allowed, the smallest enforced window's (any window's when all
     * are in shadow) full budget remaining.
     */
    private static Decision disabledDecision(List<Window> windows) {
        Window smallest = windows.get(0);
        for (Window window : windows) {
            if (smallest.inShadow() && !window.inShadow()
                    || window.inShadow() == smallest.inShadow() && window.limit() < smallest.limit()) {
                smallest = window;
            }
        }
        return Decision.allow(smallest, smallest.limit(), Duration.ZERO);
    }

    @Override
    public String toString() {
        return "SlidingWindowRateLimiter{" + guard + (disabled ? ", DISABLED" : "") + "}";
    }
}
