package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Decision;
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
    private final LimiterMetrics metrics;
    private final @Nullable RejectionCache rejections;

    Limiter(
            StoreGuard guard,
            @Nullable Clock clock,
            boolean disabled,
            LimiterMetrics metrics,
            @Nullable RejectionCache rejections) {
        this.guard = guard;
        this.clock = clock;
        this.disabled = disabled;
        this.metrics = metrics;
        this.rejections = rejections;
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
        return reserveNow(start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, null, tier.name()));
    }

    @Override
    public Reservation reserve(
            String userId, Tier tier, Amounts estimate, List<SharedBudget> shared, Concurrency concurrency) {
        Objects.requireNonNull(tier, "tier must not be null");
        Objects.requireNonNull(concurrency, "concurrency must not be null");
        return reserveNow(
                start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, concurrency, tier.name()));
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
        return reserveLater(start(userId, Plan.ordered(tier.windows(), "tier"), estimate, shared, null, tier.name()));
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
        return stepwiseAsync(start.plan(), 0, new ArrayList<>())
                .thenApply(reservation -> recorded(start, reservation, began));
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
        Plan plan = Plan.of(userId, windows, amounts, shared, concurrency, this::now);
        Reservation answer = null;
        if (disabled) {
            answer = HeldReservation.none(metrics.recordDisabled(tier, disabledDecision(windows)));
        } else {
            Decision early = plan.tooLarge();
            if (early != null) {
                answer = HeldReservation.none(metrics.record(tier, early, 0));
            } else {
                Decision cached = cache == null ? null : cache.lookup(plan.request());
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
        if (cache != null) {
            cache.remember(start.plan().request(), reservation.decision(), start.tick(), start.cancels());
        }
        return reservation;
    }

    /**
     * Makes the plan's store calls one after another: one call when the store takes all scopes at
     * once, else one per scope, the user's first (Redis Cluster). Each call is all or nothing on its
     * own, so no budget ever admits more than its limit; when a scope rejects or the store fails,
     * what the earlier scopes reserved is cancelled before the answer, so the caller's next request
     * never finds them still charged. The price is one round trip per scope, and a rejection by a
     * later scope briefly holds the earlier scopes' reservation until its cancel lands.
     */
    private Reservation stepwise(Plan plan) {
        List<HeldReservation.Part> held = new ArrayList<>();
        for (StoreRequest request : plan.calls(guard.store())) {
            Evaluation evaluation;
            try {
                evaluation = guard.evaluate(request);
            } catch (StoreGuard.Unavailable e) {
                cancel(plan, held).join();
                return stopped(plan, request, held, null, e);
            }
            if (!evaluation.isAllowed()) {
                cancel(plan, held).join();
                return stopped(plan, request, held, evaluation, null);
            }
            held.add(new HeldReservation.Part(request, evaluation));
        }
        return admitted(plan, held);
    }

    /** {@link #stepwise} without blocking: the call for scope {@code next} once the earlier ones admitted. */
    private CompletionStage<Reservation> stepwiseAsync(Plan plan, int next, List<HeldReservation.Part> held) {
        List<StoreRequest> calls = plan.calls(guard.store());
        if (next == calls.size()) {
            return CompletableFuture.completedFuture(admitted(plan, held));
        }
        StoreRequest request = calls.get(next);
        return guard.evaluateAsync(request)
                .handle((evaluation, failure) -> {
                    if (failure == null && evaluation.isAllowed()) {
                        held.add(new HeldReservation.Part(request, evaluation));
                        return stepwiseAsync(plan, next + 1, held);
                    }
                    return cancel(plan, held).thenApply(cancelled -> stopped(plan, request, held, evaluation, failure));
                })
                .thenCompose(stage -> stage);
    }

    /** Cancels what earlier scopes of a stepwise reservation hold; nothing to do before the first admits. */
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
                return HeldReservation.none(guard.onUnavailable(plan.request(), unavailable, now()));
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

    /** The reservation every scope admitted: it holds their entries until commit or cancel. */
    private Reservation admitted(Plan plan, List<HeldReservation.Part> held) {
        return new HeldReservation(plan.decide(held, null, null), held, plan.amounts(), guard, this::now);
    }

    private long now() {
        return clock == null ? StoreRequest.STORE_TIME : clock.millis();
    }

    /** What a disabled limiter answers: allowed, the smallest window's full budget remaining. */
    private static Decision disabledDecision(List<Window> windows) {
        Window smallest = windows.get(0);
        for (Window window : windows) {
            if (window.limit() < smallest.limit()) {
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
