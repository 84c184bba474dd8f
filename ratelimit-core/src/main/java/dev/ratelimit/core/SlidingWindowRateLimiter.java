package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * The entry point of the core: builds a {@link RateLimiter} over a {@link WindowStore}.
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
 *         .meterRegistry(registry)
 *         .build();
 * Decision decision = limiter.check("user_8421", TierPolicy.defaults().resolve("free"));
 * }</pre>
 *
 * <p>The limiter validates arguments before any store I/O, sorts windows shortest first, makes one
 * store call per check, and turns the store's answer into a {@link Decision}. It fails open by
 * default: while the store fails, or while the circuit breaker guarding it is open (then without
 * calling the store at all), checks are allowed and marked {@link Decision#degraded()}, the gauge
 * {@code ratelimit.fail.open} is 1, and a warning is logged at most every ten seconds.
 */
public final class SlidingWindowRateLimiter {

    /** The system property that disables every limiter built without an explicit choice. */
    public static final String DISABLED_PROPERTY = "ratelimit.disabled";

    /** The environment variable that disables every limiter built without an explicit choice. */
    public static final String DISABLED_ENVIRONMENT_VARIABLE = "RATE_LIMIT_DISABLED";

    private SlidingWindowRateLimiter() {}

    /**
     * Tells whether the kill switch is on for a limiter built without an explicit {@link
     * Builder#disabled} choice: the system property {@value #DISABLED_PROPERTY} decides if set, else
     * the variable {@value #DISABLED_ENVIRONMENT_VARIABLE} of {@code environment}; {@code true} (any
     * case, surrounding blanks ignored) disables. The one definition of the rule, for applications
     * that read their environment themselves (the gateway) and for the builder ({@code
     * System.getenv()}).
     *
     * @param environment the environment variables
     * @return whether limiting is off
     * @throws NullPointerException if {@code environment} is {@code null}
     */
    public static boolean disabledBy(Map<String, String> environment) {
        Objects.requireNonNull(environment, "environment must not be null");
        String property = System.getProperty(DISABLED_PROPERTY);
        if (property != null) {
            return Boolean.parseBoolean(property.trim());
        }
        String variable = environment.get(DISABLED_ENVIRONMENT_VARIABLE);
        return variable != null && Boolean.parseBoolean(variable.trim());
    }

    /**
     * Returns a builder of a limiter over {@code store}.
     *
     * @param store the storage backend
     * @return a new builder
     */
    public static Builder builder(WindowStore store) {
        return new Builder(Objects.requireNonNull(store, "store must not be null"));
    }

    /** Builds a limiter; not thread-safe, each {@link #build()} gives an independent limiter. */
    public static final class Builder {

        private final WindowStore store;
        private @Nullable Clock clock;
        private @Nullable Boolean disabled;
        private boolean failOpen = true;
        private @Nullable MeterRegistry meterRegistry;
        private CircuitBreakerConfig circuitBreakerConfig = StoreGuard.defaultConfig();
        private String name = "default";
        private boolean rejectionCache = true;
        private int rejectionCacheSize = 10_000;

        private Builder(WindowStore store) {
            this.store = store;
        }

        /**
         * Makes every check use this clock's time instead of the store's own clock (for Redis
         * stores, the server's {@code TIME}); for tests and simulations.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Turns the kill switch on or off: a disabled limiter allows every request with its full
         * budget remaining and never touches the store.
         *
         * <p>When not called, the system property {@value SlidingWindowRateLimiter#DISABLED_PROPERTY}
         * decides if set, else the environment variable {@value
         * SlidingWindowRateLimiter#DISABLED_ENVIRONMENT_VARIABLE}; {@code true} (any case) disables.
         *
         * @param disabled whether to disable limiting
         * @return this builder
         */
        public Builder disabled(boolean disabled) {
            this.disabled = disabled;
            return this;
        }

        /**
         * Chooses what happens when the store fails: allow and mark the decision degraded ({@code
         * true}, the default), or throw {@link RateLimiterUnavailableException} ({@code false}).
         *
         * @param failOpen whether to let requests through while the store fails
         * @return this builder
         */
        public Builder failOpen(boolean failOpen) {
            this.failOpen = failOpen;
            return this;
        }

        /**
         * Publishes metrics to this registry: decisions by tier, window and outcome, check latency,
         * store failures, the fail-open and disabled gauges, and the circuit breaker's state.
         *
         * @param meterRegistry the registry
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry meterRegistry) {
            this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry must not be null");
            return this;
        }

        /**
         * Replaces the circuit breaker settings. The default opens after 5 calls of which half
         * failed or took over a second, within the last 10, stays open half a second, then lets 3 probe
         * calls through.
         *
         * @param config the resilience4j circuit breaker configuration
         * @return this builder
         */
        public Builder circuitBreaker(CircuitBreakerConfig config) {
            this.circuitBreakerConfig = Objects.requireNonNull(config, "config must not be null");
            return this;
        }

        /**
         * Names the limiter in metrics ({@code limiter} tag) and logs; defaults to {@code default}.
         *
         * @param name the name
         * @return this builder
         */
        public Builder name(String name) {
            Objects.requireNonNull(name, "name must not be null");
            if (name.isBlank()) {
                throw new IllegalArgumentException("name must not be blank");
            }
            this.name = name;
            return this;
        }

        /**
         * Turns the local rejection cache on (the default) or off.
         *
         * <p>After the store rejects a request by a request window with retry time {@code r}, the
         * limiter rejects the same user's requests for the same windows and shared budgets locally,
         * without a store call, until {@code r} has passed since that store call started, with the
         * decision the store would give (remaining 0, the rejecting window, the retry time counted
         * down). This is exact: no entry leaves a sliding-window log before its retry time, and other
         * limiters only add entries. A cancelled reservation is the one way room comes back sooner:
         * cancels through this limiter drop the affected entries at once, while a cancel through
         * another instance can leave this one rejecting a request that would fit for at most the
         * cached retry time. Rejections by token windows are never cached. The meters {@code
         * ratelimit.rejection.cache.hits} and {@code ratelimit.rejection.cache.size} show its use.
         *
         * @param enabled whether to cache rejections
         * @return this builder
         */
        public Builder rejectionCache(boolean enabled) {
            this.rejectionCache = enabled;
            return this;
        }

        /**
         * Bounds the rejection cache to this many users (default 10,000); when it is full, a new
         * rejection is not cached until older ones expire.
         *
         * @param maximumSize the most users the cache holds, at least 1
         * @return this builder
         */
        public Builder rejectionCacheSize(int maximumSize) {
            if (maximumSize < 1) {
                throw new IllegalArgumentException("maximumSize must be at least 1, was " + maximumSize);
            }
            this.rejectionCacheSize = maximumSize;
            return this;
        }

        /**
         * Builds the limiter.
         *
         * @return a thread-safe limiter
         */
        public RateLimiter build() {
            boolean off = disabled != null ? disabled : disabledBy(System.getenv());
            LimiterMetrics metrics = LimiterMetrics.create(meterRegistry, name, off);
            RejectionCache rejections = null;
            if (rejectionCache && !off) {
                Clock fixed = clock;
                rejections = new RejectionCache(
                        rejectionCacheSize, fixed != null ? fixed::millis : () -> System.nanoTime() / 1_000_000);
                metrics.bind(rejections);
            }
            StoreGuard guard =
                    new StoreGuard(store, name, failOpen, circuitBreakerConfig, metrics, meterRegistry, rejections);
            if (off) {
                System.getLogger(SlidingWindowRateLimiter.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "Rate limiter ''{0}'' is DISABLED: every request is allowed and nothing is counted",
                                name);
            }
            return new Limiter(guard, clock, off, metrics, rejections);
        }
    }

    /** The limiter: validation, ordering, the store calls, and the decision. */
    static final class Limiter implements RateLimiter {

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
            return reserveNow(userId, single(limit, window), 0, List.of(), NO_TIER)
                    .decision();
        }

        @Override
        public Decision check(String userId, List<Window> windows) {
            return reserveNow(userId, ordered(windows, "windows"), 0, List.of(), NO_TIER)
                    .decision();
        }

        @Override
        public Decision check(String userId, Tier tier) {
            Objects.requireNonNull(tier, "tier must not be null");
            return reserveNow(userId, ordered(tier.windows(), "tier"), 0, List.of(), tier.name())
                    .decision();
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, long limit, Duration window) {
            return reserveLater(userId, single(limit, window), 0, List.of(), NO_TIER)
                    .thenApply(Reservation::decision);
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, List<Window> windows) {
            return reserveLater(userId, ordered(windows, "windows"), 0, List.of(), NO_TIER)
                    .thenApply(Reservation::decision);
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, Tier tier) {
            Objects.requireNonNull(tier, "tier must not be null");
            return reserveLater(userId, ordered(tier.windows(), "tier"), 0, List.of(), tier.name())
                    .thenApply(Reservation::decision);
        }

        @Override
        public Reservation reserve(String userId, Tier tier, long estimatedTokens, List<SharedBudget> shared) {
            Objects.requireNonNull(tier, "tier must not be null");
            return reserveNow(userId, ordered(tier.windows(), "tier"), estimatedTokens, shared, tier.name());
        }

        @Override
        public CompletionStage<Reservation> reserveAsync(
                String userId, Tier tier, long estimatedTokens, List<SharedBudget> shared) {
            Objects.requireNonNull(tier, "tier must not be null");
            return reserveLater(userId, ordered(tier.windows(), "tier"), estimatedTokens, shared, tier.name());
        }

        @Override
        public List<Decision.Usage> usage(String userId, Tier tier) {
            validateUser(userId);
            Objects.requireNonNull(tier, "tier must not be null");
            return usageOf(StoreRequest.Scope.user(userId, ordered(tier.windows(), "tier")));
        }

        @Override
        public List<Decision.Usage> usage(SharedBudget budget) {
            Objects.requireNonNull(budget, "budget must not be null");
            return usageOf(StoreRequest.Scope.shared(budget.name(), ordered(budget.windows(), "budget")));
        }

        private List<Decision.Usage> usageOf(StoreRequest.Scope scope) {
            if (disabled) {
                return List.of();
            }
            StoreRequest request = new StoreRequest(List.of(scope), 0, now());
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

        private Reservation reserveNow(
                String userId, List<Window> windows, long tokens, List<SharedBudget> shared, String tier) {
            RejectionCache cache = rejections;
            long tick = cache == null ? 0 : cache.tick();
            long cancels = cache == null ? 0 : cache.cancels();
            Plan plan = plan(userId, windows, tokens, shared);
            if (disabled) {
                return HeldReservation.none(metrics.recordDisabled(tier, disabledDecision(windows)));
            }
            Decision early = plan.tooLarge();
            if (early != null) {
                return HeldReservation.none(metrics.record(tier, early, 0));
            }
            Decision cached = cache == null ? null : cache.lookup(plan.request());
            if (cached != null) {
                return HeldReservation.none(metrics.recordCached(tier, cached));
            }
            long start = System.nanoTime();
            Reservation reservation;
            if (plan.atomic(guard.store())) {
                reservation = evaluated(plan, List.of(plan.request()), () -> guard.evaluate(plan.request()));
            } else {
                reservation = stepwise(plan);
            }
            metrics.record(tier, reservation.decision(), System.nanoTime() - start);
            if (cache != null) {
                cache.remember(plan.request(), reservation.decision(), tick, cancels);
            }
            return reservation;
        }

        private CompletionStage<Reservation> reserveLater(
                String userId, List<Window> windows, long tokens, List<SharedBudget> shared, String tier) {
            RejectionCache cache = rejections;
            long tick = cache == null ? 0 : cache.tick();
            long cancels = cache == null ? 0 : cache.cancels();
            Plan plan = plan(userId, windows, tokens, shared);
            if (disabled) {
                return CompletableFuture.completedFuture(
                        HeldReservation.none(metrics.recordDisabled(tier, disabledDecision(windows))));
            }
            Decision early = plan.tooLarge();
            if (early != null) {
                return CompletableFuture.completedFuture(HeldReservation.none(metrics.record(tier, early, 0)));
            }
            Decision cached = cache == null ? null : cache.lookup(plan.request());
            if (cached != null) {
                return CompletableFuture.completedFuture(HeldReservation.none(metrics.recordCached(tier, cached)));
            }
            long start = System.nanoTime();
            CompletionStage<Reservation> stage = plan.atomic(guard.store())
                    ? guard.evaluateAsync(plan.request())
                            .handle((evaluation, failure) ->
                                    finish(plan, List.of(plan.request()), List.of(), evaluation, failure))
                    : stepwiseAsync(plan, 0, new ArrayList<>());
            return stage.thenApply(reservation -> {
                metrics.record(tier, reservation.decision(), System.nanoTime() - start);
                if (cache != null) {
                    cache.remember(plan.request(), reservation.decision(), tick, cancels);
                }
                return reservation;
            });
        }

        /** One atomic store call for every scope. */
        private Reservation evaluated(
                Plan plan, List<StoreRequest> requests, java.util.function.Supplier<Evaluation> call) {
            Evaluation evaluation;
            try {
                evaluation = call.get();
            } catch (StoreGuard.Unavailable e) {
                return HeldReservation.none(guard.onUnavailable(plan.shortest(), e));
            }
            return finish(plan, requests, List.of(), evaluation, null);
        }

        /**
         * For stores that cannot evaluate several scopes atomically (Redis Cluster): reserve scope by
         * scope, the user's first, and cancel what was reserved as soon as one scope rejects. Each
         * scope is all or nothing on its own, so no budget ever admits more than its limit; the
         * price is one round trip per scope, and a rejection by a later scope briefly holds the
         * earlier scopes' reservation until its cancel lands.
         */
        private Reservation stepwise(Plan plan) {
            List<HeldReservation.Part> held = new ArrayList<>();
            for (StoreRequest request : plan.perScope()) {
                Evaluation evaluation;
                try {
                    evaluation = guard.evaluate(request);
                } catch (StoreGuard.Unavailable e) {
                    // the caller's next request must not find this one's earlier scopes still charged
                    HeldReservation.cancelAll(guard, held, plan.tokens(), now()).join();
                    return HeldReservation.none(guard.onUnavailable(plan.shortest(), e));
                }
                if (!evaluation.isAllowed()) {
                    HeldReservation.cancelAll(guard, held, plan.tokens(), now()).join();
                    return HeldReservation.none(plan.decide(held, request, evaluation));
                }
                held.add(new HeldReservation.Part(request, evaluation));
            }
            return new HeldReservation(plan.decide(held, null, null), held, plan.tokens(), guard, this::now);
        }

        private CompletionStage<Reservation> stepwiseAsync(Plan plan, int next, List<HeldReservation.Part> held) {
            if (next == plan.perScope().size()) {
                return CompletableFuture.completedFuture(
                        new HeldReservation(plan.decide(held, null, null), held, plan.tokens(), guard, this::now));
            }
            StoreRequest request = plan.perScope().get(next);
            return guard.evaluateAsync(request)
                    .handle((evaluation, failure) -> {
                        if (failure == null && evaluation.isAllowed()) {
                            held.add(new HeldReservation.Part(request, evaluation));
                            return stepwiseAsync(plan, next + 1, held);
                        }
                        return HeldReservation.cancelAll(guard, held, plan.tokens(), now())
                                .thenApply(cancelled -> finish(plan, List.of(request), held, evaluation, failure));
                    })
                    .thenCompose(stage -> stage);
        }

        /** Turns the answer to the last store call into the reservation, applying the failure policy. */
        private Reservation finish(
                Plan plan,
                List<StoreRequest> requests,
                List<HeldReservation.Part> before,
                @Nullable Evaluation evaluation,
                @Nullable Throwable failure) {
            if (failure != null || evaluation == null) {
                Throwable cause = failure == null ? null : StoreGuard.unwrap(failure);
                if (cause instanceof StoreGuard.Unavailable unavailable) {
                    return HeldReservation.none(guard.onUnavailable(plan.shortest(), unavailable));
                }
                if (cause instanceof RuntimeException e) {
                    throw e;
                }
                throw new IllegalStateException(cause);
            }
            StoreRequest request = requests.get(0);
            if (!evaluation.isAllowed()) {
                return HeldReservation.none(plan.decide(before, request, evaluation));
            }
            List<HeldReservation.Part> held = new ArrayList<>(before);
            held.add(new HeldReservation.Part(request, evaluation));
            return new HeldReservation(plan.decide(held, null, null), held, plan.tokens(), guard, this::now);
        }

        private Plan plan(String userId, List<Window> windows, long tokens, @Nullable List<SharedBudget> shared) {
            validateUser(userId);
            if (tokens < 0) {
                throw new IllegalArgumentException("estimatedTokens must not be negative, was " + tokens);
            }
            if (shared == null) {
                throw new NullPointerException("shared must not be null");
            }
            return Plan.of(userId, windows, tokens, shared, now());
        }

        private long now() {
            return clock == null ? StoreRequest.STORE_TIME : clock.millis();
        }

        private static Decision disabledDecision(List<Window> windows) {
            Window smallest = windows.get(0);
            for (Window window : windows) {
                if (window.limit() < smallest.limit()) {
                    smallest = window;
                }
            }
            return Decision.allow(smallest, smallest.limit(), Duration.ZERO);
        }

        private static void validateUser(@Nullable String userId) {
            if (userId == null) {
                throw new NullPointerException("userId must not be null");
            }
            if (userId.isEmpty()) {
                throw new IllegalArgumentException("userId must not be empty");
            }
        }

        private static List<Window> single(long limit, @Nullable Duration window) {
            if (limit <= 0) {
                throw new IllegalArgumentException("limit must be at least 1, was " + limit);
            }
            if (window == null) {
                throw new NullPointerException("window must not be null");
            }
            try {
                return List.of(Window.of(limit, window));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        String.valueOf(e.getMessage()).replaceFirst("^length", "window"), e);
            }
        }

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
                    throw new IllegalArgumentException(argument + " must not hold two windows counting "
                            + sorted.get(i).unit().name().toLowerCase(java.util.Locale.ROOT)
                            + " over the same length, found " + sorted.get(i).length() + " twice");
                }
            }
            return List.copyOf(sorted);
        }

        @Override
        public String toString() {
            return "SlidingWindowRateLimiter{" + guard + (disabled ? ", DISABLED" : "") + "}";
        }
    }
}
