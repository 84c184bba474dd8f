package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.FailurePolicy;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Window;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The entry point of the core: builds a {@link RateLimiter} over a {@link WindowStore}.
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
 *         .metrics(metrics) // such as ratelimit-micrometer's MicrometerLimiterMetrics.of(registry)
 *         .build();
 * Decision decision = limiter.check("user_8421", TierPolicy.defaults().resolve("free"));
 * }</pre>
 *
 * <p>The limiter validates arguments before any store I/O, sorts windows shortest first, and turns the
 * store's answer into a {@link Decision}. A check is one store call when it names only the user's
 * windows or when the store evaluates several scopes in one atomic step ({@link
 * WindowStore#atomicAcrossScopes()}); on a store that cannot (Redis Cluster: a shared budget's keys lie
 * in other hash slots than the user's), a reservation with shared budgets makes one store call per
 * scope, the user's first, and cancels what it reserved as soon as a later scope rejects. A disabled
 * limiter, a request for more of a unit (tokens, spend) than a window allows, and a rejection the local rejection cache
 * answers make no store call at all.
 *
 * <p>Request and token windows fail open by default: while the store fails, or while the circuit
 * breaker guarding it is open (then without calling the store at all), checks are allowed and marked
 * {@link Decision#degraded()}, the gauge {@code ratelimit.fail.open} is 1, and a warning is logged at
 * most every ten seconds. Windows of money and every other unit fail closed by default: a request
 * with one of them is refused with {@link RateLimiterUnavailableException} ({@link
 * Builder#failOpen(Window.Unit, boolean)} chooses per unit).
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
        private final Map<Window.Unit, FailurePolicy> unitPolicies = new HashMap<>();
        private int expectedInstances = 1;
        private @Nullable LimiterMetrics metrics;
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
         * Chooses what happens to requests with a window of this unit while the store cannot decide:
         * admitted and marked degraded ({@code true}) or refused with {@link
         * RateLimiterUnavailableException} ({@code false}). A request is refused when any of its
         * windows fails closed.
         *
         * <p>Without a choice, request and token windows follow {@link #failOpen(boolean)}, and
         * windows of every other unit, such as {@link dev.ratelimit.api.Window.Unit#USD_MICROS},
         * fail closed: a budget in money that fails open is an open cheque.
         *
         * @param unit the unit
         * @param failOpen whether its windows let requests through while the store fails
         * @return this builder
         */
        public Builder failOpen(Window.Unit unit, boolean failOpen) {
            return failurePolicy(unit, failOpen ? FailurePolicy.OPEN : FailurePolicy.CLOSED);
        }

        /**
         * Chooses what windows of this unit do while the store cannot decide, unless a window names
         * its own ({@link Window#withFailurePolicy}): {@link FailurePolicy#OPEN} admits them
         * unchecked, {@link FailurePolicy#CLOSED} refuses the request with {@link
         * RateLimiterUnavailableException}, {@link FailurePolicy#LOCAL} decides against this
         * instance's share of the limit ({@link #expectedInstances(int)}). A request is refused when
         * any of its windows fails closed.
         *
         * <p>Without a choice, request and token windows follow {@link #failOpen(boolean)} (open or
         * closed), and windows of every other unit, such as {@link Window.Unit#USD_MICROS}, fail
         * closed.
         *
         * @param unit the unit
         * @param policy what its windows do while the store cannot decide
         * @return this builder
         */
        public Builder failurePolicy(Window.Unit unit, FailurePolicy policy) {
            unitPolicies.put(
                    Objects.requireNonNull(unit, "unit must not be null"),
                    Objects.requireNonNull(policy, "policy must not be null"));
            return this;
        }

        /**
         * Sets how many instances of this limiter share the store: a window that decides locally
         * while the store cannot ({@link FailurePolicy#LOCAL}) admits at most its limit divided by
         * this number (rounded down) in this process, so that the instances together never admit more
         * than the limit. Set it to the most instances that run at once; the default, 1, suits a
         * single instance.
         *
         * @param expectedInstances the number of instances, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code expectedInstances} is below 1
         */
        public Builder expectedInstances(int expectedInstances) {
            if (expectedInstances < 1) {
                throw new IllegalArgumentException("expectedInstances must be at least 1, was " + expectedInstances);
            }
            this.expectedInstances = expectedInstances;
            return this;
        }

        /**
         * Reports what the limiter does to these metrics: decisions by tier, window and outcome, check
         * latency, store failures, settlements, the fail-open, disabled and rejection-cache readings,
         * and the circuit breaker's calls and state. {@code ratelimit-micrometer}'s {@code
         * MicrometerLimiterMetrics.of(registry)} records them as Micrometer meters; by default nothing
         * is recorded. One instance serves one limiter.
         *
         * @param metrics the metrics
         * @return this builder
         */
        public Builder metrics(LimiterMetrics metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics must not be null");
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
            Recorder recorder = new Recorder(metrics, name, off);
            RejectionCache rejections = null;
            if (rejectionCache && !off) {
                Clock fixed = clock;
                rejections = new RejectionCache(
                        rejectionCacheSize, fixed != null ? fixed::millis : () -> System.nanoTime() / 1_000_000);
                recorder.bind(rejections);
            }
            StoreGuard guard = new StoreGuard(
                    store,
                    name,
                    failOpen,
                    unitPolicies,
                    new LocalShares(expectedInstances),
                    circuitBreakerConfig,
                    recorder,
                    rejections);
            recorder.start();
            if (off) {
                System.getLogger(SlidingWindowRateLimiter.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "Rate limiter ''{0}'' is DISABLED: every request is allowed and nothing is counted",
                                name);
            }
            return new Limiter(guard, clock, off, recorder, rejections);
        }
    }
}
