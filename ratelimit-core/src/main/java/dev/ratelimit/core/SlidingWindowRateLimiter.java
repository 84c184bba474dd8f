package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
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
         * failed or took over a second, within the last 10, stays open 5 seconds, then lets 3 probe
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
         * Builds the limiter.
         *
         * @return a thread-safe limiter
         */
        public RateLimiter build() {
            boolean off = disabled != null ? disabled : disabledByDefault();
            LimiterMetrics metrics = LimiterMetrics.create(meterRegistry, name, off);
            StoreGuard guard = new StoreGuard(store, name, failOpen, circuitBreakerConfig, metrics, meterRegistry);
            if (off) {
                System.getLogger(SlidingWindowRateLimiter.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "Rate limiter ''{0}'' is DISABLED: every request is allowed and nothing is counted",
                                name);
            }
            return new Limiter(guard, clock, off, metrics);
        }

        private static boolean disabledByDefault() {
            String property = System.getProperty(DISABLED_PROPERTY);
            if (property != null) {
                return Boolean.parseBoolean(property.trim());
            }
            String variable = System.getenv(DISABLED_ENVIRONMENT_VARIABLE);
            return variable != null && Boolean.parseBoolean(variable.trim());
        }
    }

    /** The limiter: validation, ordering, one store call, and the decision. */
    static final class Limiter implements RateLimiter {

        private static final Comparator<Window> BY_LENGTH = Comparator.comparing(Window::length);
        private static final String NO_TIER = "none";

        private final StoreGuard guard;
        private final @Nullable Clock clock;
        private final boolean disabled;
        private final LimiterMetrics metrics;

        Limiter(StoreGuard guard, @Nullable Clock clock, boolean disabled, LimiterMetrics metrics) {
            this.guard = guard;
            this.clock = clock;
            this.disabled = disabled;
            this.metrics = metrics;
        }

        @Override
        public Decision check(String userId, int limit, Duration window) {
            return decide(userId, single(limit, window), NO_TIER);
        }

        @Override
        public Decision check(String userId, List<Window> windows) {
            return decide(userId, ordered(windows), NO_TIER);
        }

        @Override
        public Decision check(String userId, Tier tier) {
            Objects.requireNonNull(tier, "tier must not be null");
            return decide(userId, ordered(tier.windows()), tier.name());
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, int limit, Duration window) {
            return decideAsync(userId, single(limit, window), NO_TIER);
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, List<Window> windows) {
            return decideAsync(userId, ordered(windows), NO_TIER);
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, Tier tier) {
            Objects.requireNonNull(tier, "tier must not be null");
            return decideAsync(userId, ordered(tier.windows()), tier.name());
        }

        private Decision decide(String userId, List<Window> windows, String tier) {
            validateUser(userId);
            if (disabled) {
                return metrics.recordDisabled(tier, disabledDecision(windows));
            }
            long start = System.nanoTime();
            StoreRequest request = new StoreRequest(userId, windows, 1, now());
            Decision decision = guard.evaluate(request, evaluation -> toDecision(windows, evaluation));
            return metrics.record(tier, decision, System.nanoTime() - start);
        }

        private CompletionStage<Decision> decideAsync(String userId, List<Window> windows, String tier) {
            validateUser(userId);
            if (disabled) {
                return CompletableFuture.completedFuture(metrics.recordDisabled(tier, disabledDecision(windows)));
            }
            long start = System.nanoTime();
            StoreRequest request = new StoreRequest(userId, windows, 1, now());
            return guard.evaluateAsync(request, evaluation -> toDecision(windows, evaluation))
                    .thenApply(decision -> metrics.record(tier, decision, System.nanoTime() - start));
        }

        private long now() {
            return clock == null ? StoreRequest.STORE_TIME : clock.millis();
        }

        static Decision toDecision(List<Window> windows, Evaluation evaluation) {
            if (!evaluation.isAllowed()) {
                int index = evaluation.rejectedIndex();
                if (index >= windows.size()) {
                    throw new RateLimiterUnavailableException(
                            "store answered with window index " + index + " of " + windows.size());
                }
                return Decision.reject(windows.get(index), Duration.ofMillis(evaluation.resetAfterMillis(index)));
            }
            if (evaluation.size() != windows.size()) {
                throw new RateLimiterUnavailableException(
                        "store answered for " + evaluation.size() + " windows, asked for " + windows.size());
            }
            int best = 0;
            long bestRemaining = Long.MAX_VALUE;
            for (int i = 0; i < windows.size(); i++) {
                long remaining = windows.get(i).limit() - evaluation.used(i);
                if (remaining < bestRemaining) { // strict: ties keep the shorter window
                    best = i;
                    bestRemaining = remaining;
                }
            }
            Window window = windows.get(best);
            int remaining = (int) Math.max(0, Math.min(window.limit(), bestRemaining));
            return Decision.allow(window, remaining, Duration.ofMillis(evaluation.resetAfterMillis(best)));
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

        private static List<Window> single(int limit, @Nullable Duration window) {
            if (limit <= 0) {
                throw new IllegalArgumentException("limit must be at least 1, was " + limit);
            }
            if (window == null) {
                throw new NullPointerException("window must not be null");
            }
            try {
                return List.of(Window.of(limit, window));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage().replaceFirst("^length", "window"), e);
            }
        }

        private static List<Window> ordered(@Nullable List<Window> windows) {
            if (windows == null) {
                throw new NullPointerException("windows must not be null");
            }
            if (windows.isEmpty()) {
                throw new IllegalArgumentException("windows must not be empty");
            }
            if (windows.size() == 1) {
                Window only = windows.get(0);
                if (only == null) {
                    throw new NullPointerException("windows must not contain null");
                }
                return List.of(only);
            }
            List<Window> sorted = new ArrayList<>(windows.size());
            Set<Long> lengths = new HashSet<>();
            for (Window window : windows) {
                if (window == null) {
                    throw new NullPointerException("windows must not contain null");
                }
                if (!lengths.add(window.lengthSeconds())) {
                    throw new IllegalArgumentException("windows must not hold two windows of the same length, found "
                            + window.length() + " twice");
                }
                sorted.add(window);
            }
            sorted.sort(BY_LENGTH);
            return sorted;
        }

        @Override
        public String toString() {
            return "SlidingWindowRateLimiter{" + guard + (disabled ? ", DISABLED" : "") + "}";
        }
    }
}
