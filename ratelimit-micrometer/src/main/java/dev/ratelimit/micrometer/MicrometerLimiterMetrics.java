package dev.ratelimit.micrometer;

import dev.ratelimit.api.Decision;
import dev.ratelimit.core.LimiterMetrics;
import dev.ratelimit.core.LimiterState;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Records a limiter's {@link LimiterMetrics} as Micrometer meters, each tagged with the limiter's name
 * ({@code limiter}):
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
 *         .metrics(MicrometerLimiterMetrics.of(registry))
 *         .build();
 * }</pre>
 *
 * <ul>
 *   <li>{@code ratelimit.decisions} (counter; tags limiter, tier, window, outcome = allowed,
 *       rejected, degraded or disabled)
 *   <li>{@code ratelimit.shadow.refusals} (counter; tags limiter, tier, window, level = user, or a
 *       shared budget's name up to its first colon, else shared): requests a shadow window would
 *       have refused, admitted
 *   <li>{@code ratelimit.check} (timer): latency of checks that reached the guard
 *   <li>{@code ratelimit.store.failures} (counter; tag reason = error or circuit_open)
 *   <li>{@code ratelimit.fail.open} (gauge): 1 while checks are let through because the store fails
 *   <li>{@code ratelimit.store.unavailable} (gauge): 1 while the store fails, whether the limiter
 *       fails open or closed: the alerting metric
 *   <li>{@code ratelimit.settle.deferred} (counter; tag reason = error, circuit_open or in_doubt),
 *       {@code ratelimit.settle.retried} (counter), {@code ratelimit.settle.pending} (gauge), {@code
 *       ratelimit.settle.pending.oldest} (time gauge) and {@code ratelimit.settle.failures} (counter;
 *       tag reason = expired or queue_full)
 *   <li>{@code ratelimit.disabled} (gauge): 1 when the kill switch is on
 *   <li>{@code ratelimit.rejection.cache.hits} (counter) and {@code ratelimit.rejection.cache.size}
 *       (gauge, with the cache on)
 *   <li>the circuit breaker's, under the names and tags of resilience4j's own {@code
 *       TaggedCircuitBreakerMetrics} (tag name = {@code ratelimit-<limiter>}), so that dashboards built
 *       on them keep working: {@code resilience4j.circuitbreaker.state} (gauge per state, tag state),
 *       {@code .calls} (timer; kind = successful, failed or ignored), {@code .not.permitted.calls}
 *       (counter; kind = not_permitted), {@code .buffered.calls} and {@code .slow.calls} (gauges;
 *       kind = successful or failed), {@code .failure.rate} and {@code .slow.call.rate} (gauges)
 * </ul>
 *
 * <p>One instance serves one limiter: a second limiter built with it is refused.
 */
public final class MicrometerLimiterMetrics implements LimiterMetrics {

    private static final String BREAKER = "resilience4j.circuitbreaker.";

    private final MeterRegistry registry;
    private volatile @Nullable Meters meters;

    private MicrometerLimiterMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Returns metrics that register one limiter's meters in a registry.
     *
     * @param registry the registry
     * @return metrics for one limiter's builder
     * @throws NullPointerException if {@code registry} is {@code null}
     */
    public static MicrometerLimiterMetrics of(MeterRegistry registry) {
        return new MicrometerLimiterMetrics(Objects.requireNonNull(registry, "registry must not be null"));
    }

    /**
     * Registers the limiter's meters.
     *
     * @throws IllegalStateException if these metrics serve another limiter already
     */
    @Override
    public synchronized void bind(LimiterState limiter) {
        Meters bound = meters;
        if (bound != null) {
            throw new IllegalStateException("these metrics already serve limiter '" + bound.limiter
                    + "': give each limiter its own MicrometerLimiterMetrics.of(registry)");
        }
        meters = new Meters(registry, limiter);
    }

    @Override
    public void recordDecision(String tier, Decision decision, long nanos) {
        Meters m = meters;
        if (m != null) {
            m.latency.record(nanos, TimeUnit.NANOSECONDS);
            m.count(tier, decision, decision.degraded() ? "degraded" : decision.allowed() ? "allowed" : "rejected");
            for (Decision.ShadowRefusal refusal : decision.shadowRefusals()) {
                m.countShadow(tier, refusal);
            }
        }
    }

    @Override
    public void recordDisabled(String tier, Decision decision) {
        Meters m = meters;
        if (m != null) {
            m.count(tier, decision, "disabled");
        }
    }

    @Override
    public void recordCachedRejection(String tier, Decision decision) {
        Meters m = meters;
        if (m != null) {
            m.cacheHits.increment();
            m.count(tier, decision, "rejected");
        }
    }

    @Override
    public void recordStoreFailure(String reason) {
        Meters m = meters;
        if (m != null) {
            m.counter(
                            m.failures,
                            "ratelimit.store.failures",
                            reason,
                            "Checks whose store call failed or was refused" + " by the open circuit breaker")
                    .increment();
        }
    }

    @Override
    public void recordSettleDeferred(String reason) {
        Meters m = meters;
        if (m != null) {
            m.counter(
                            m.settleDeferred,
                            "ratelimit.settle.deferred",
                            reason,
                            "Settlements the store did not take at once, queued to be retried")
                    .increment();
        }
    }

    @Override
    public void recordSettleRetried() {
        Meters m = meters;
        if (m != null) {
            m.settleRetried.increment();
        }
    }

    @Override
    public void recordSettleFailure(String reason) {
        Meters m = meters;
        if (m != null) {
            m.counter(
                            m.settleFailures,
                            "ratelimit.settle.failures",
                            reason,
                            "Reservation settlements given up; the estimate stays until its window passes")
                    .increment();
        }
    }

    @Override
    public void recordBreakerCall(String kind, long nanos) {
        Meters m = meters;
        if (m != null) {
            Timer timer = m.breakerCalls.get(kind);
            if (timer != null) {
                timer.record(nanos, TimeUnit.NANOSECONDS);
            }
        }
    }

    @Override
    public void recordBreakerNotPermitted() {
        Meters m = meters;
        if (m != null) {
            m.notPermitted.increment();
        }
    }

    /**
     * The level a shadow refusal counts under: {@code user} for the user's own window; for a shared
     * budget, its name up to the first colon ({@code team} for {@code team:research}), so that
     * budgets named {@code <level>:<name>} count by level and the tag stays bounded, else {@code
     * shared}.
     */
    static String level(@Nullable String budget) {
        if (budget == null) {
            return "user";
        }
        int colon = budget.indexOf(':');
        return colon > 0 ? budget.substring(0, colon) : "shared";
    }

    @Override
    public String toString() {
        Meters m = meters;
        return "MicrometerLimiterMetrics{" + (m == null ? "unbound" : m.limiter) + "}";
    }

    /** The meters of one limiter, registered when it is built. */
    private static final class Meters {

        private final MeterRegistry registry;
        private final String limiter;
        private final Timer latency;
        private final Counter settleRetried;
        private final Counter cacheHits;
        private final Counter notPermitted;
        private final ConcurrentMap<String, Timer> breakerCalls = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> decisions = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> shadowRefusals = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> failures = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> settleFailures = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> settleDeferred = new ConcurrentHashMap<>();

        Meters(MeterRegistry registry, LimiterState state) {
            this.registry = registry;
            this.limiter = state.name();
            if (registry.find("ratelimit.fail.open").tag("limiter", limiter).gauge() != null) {
                // Micrometer keeps the first gauge: this limiter's alerting metric would be invisible.
                System.getLogger(MicrometerLimiterMetrics.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "A rate limiter named ''{0}'' is already registered in this MeterRegistry: its"
                                        + " gauges will report the first limiter only. Give each limiter its own"
                                        + " name(...)",
                                limiter);
            }
            this.latency = Timer.builder("ratelimit.check")
                    .description("Latency of rate-limit checks, store call included")
                    .tag("limiter", limiter)
                    .register(registry);
            gauge(
                    state,
                    "ratelimit.fail.open",
                    "1 while requests are let through unlimited because the store fails",
                    s -> s.failingOpen() ? 1 : 0);
            gauge(
                    state,
                    "ratelimit.store.unavailable",
                    "1 while the rate-limit store fails, failing open or closed",
                    s -> s.storeUnavailable() ? 1 : 0);
            this.settleRetried = Counter.builder("ratelimit.settle.retried")
                    .description("Queued settlements the store took on a retry")
                    .tag("limiter", limiter)
                    .register(registry);
            this.cacheHits = Counter.builder("ratelimit.rejection.cache.hits")
                    .description("Rejections answered by the local rejection cache, with no store call")
                    .tag("limiter", limiter)
                    .register(registry);
            gauge(
                    state,
                    "ratelimit.disabled",
                    "1 when the rate limiter's kill switch is on",
                    s -> s.disabled() ? 1 : 0);
            if (state.cachesRejections()) {
                gauge(
                        state,
                        "ratelimit.rejection.cache.size",
                        "Users with a cached rejection",
                        s -> s.cachedRejections());
            }
            gauge(
                    state,
                    "ratelimit.settle.pending",
                    "Settlements queued for the store or being retried",
                    s -> s.pendingSettlements());
            TimeGauge.builder(
                            "ratelimit.settle.pending.oldest",
                            state,
                            TimeUnit.MILLISECONDS,
                            LimiterState::oldestPendingSettlementMillis)
                    .description("How long the oldest queued settlement has waited for the store")
                    .tag("limiter", limiter)
                    .register(registry);
            this.notPermitted = breaker(state);
        }

        private void gauge(LimiterState state, String name, String description, ToDoubleFunction<LimiterState> value) {
            Gauge.builder(name, state, value)
                    .description(description)
                    .tag("limiter", limiter)
                    .register(registry);
        }

        /** The breaker's meters; returns its not-permitted counter. */
        private Counter breaker(LimiterState state) {
            String name = state.breakerName();
            for (String breakerState : state.breakerStates()) {
                Gauge.builder(BREAKER + "state", state, s -> s.breakerState().equals(breakerState) ? 1 : 0)
                        .description("The states of the circuit breaker")
                        .tag("name", name)
                        .tag("state", breakerState)
                        .register(registry);
            }
            windowGauge(state, "buffered.calls", "failed", s -> s.breakerBufferedCalls(true));
            windowGauge(state, "buffered.calls", "successful", s -> s.breakerBufferedCalls(false));
            windowGauge(state, "slow.calls", "failed", s -> s.breakerSlowCalls(true));
            windowGauge(state, "slow.calls", "successful", s -> s.breakerSlowCalls(false));
            Gauge.builder(BREAKER + "failure.rate", state, LimiterState::breakerFailureRate)
                    .description("The failure rate of the circuit breaker")
                    .tag("name", name)
                    .register(registry);
            Gauge.builder(BREAKER + "slow.call.rate", state, LimiterState::breakerSlowCallRate)
                    .description("The slow call rate of the circuit breaker")
                    .tag("name", name)
                    .register(registry);
            breakerCalls(name, "successful", "Total number of successful calls");
            breakerCalls(name, "failed", "Total number of failed calls");
            breakerCalls(name, "ignored", "Total number of calls which failed but the exception was ignored");
            return Counter.builder(BREAKER + "not.permitted.calls")
                    .description("Total number of not permitted calls")
                    .tag("name", name)
                    .tag("kind", "not_permitted")
                    .register(registry);
        }

        private void windowGauge(LimiterState state, String suffix, String kind, ToDoubleFunction<LimiterState> value) {
            Gauge.builder(BREAKER + suffix, state, value)
                    .description("Calls of this kind in the circuit breaker's sliding window")
                    .tag("name", state.breakerName())
                    .tag("kind", kind)
                    .register(registry);
        }

        private void breakerCalls(String name, String kind, String description) {
            breakerCalls.put(
                    kind,
                    Timer.builder(BREAKER + "calls")
                            .description(description)
                            .tag("name", name)
                            .tag("kind", kind)
                            .register(registry));
        }

        void count(String tier, Decision decision, String outcome) {
            String window = decision.window().name();
            String key = tier + '\u0000' + window + '\u0000' + outcome;
            Counter counter = decisions.get(key);
            if (counter == null) {
                counter = decisions.computeIfAbsent(
                        key,
                        k -> Counter.builder("ratelimit.decisions")
                                .description("Rate-limit decisions by tier, deciding window and outcome")
                                .tag("limiter", limiter)
                                .tag("tier", tier)
                                .tag("window", window)
                                .tag("outcome", outcome)
                                .register(registry));
            }
            counter.increment();
        }

        void countShadow(String tier, Decision.ShadowRefusal refusal) {
            String window = refusal.window().name();
            String level = level(refusal.budget());
            String key = tier + '\u0000' + window + '\u0000' + level;
            Counter counter = shadowRefusals.get(key);
            if (counter == null) {
                counter = shadowRefusals.computeIfAbsent(
                        key,
                        k -> Counter.builder("ratelimit.shadow.refusals")
                                .description("Requests a shadow window would have refused, admitted")
                                .tag("limiter", limiter)
                                .tag("tier", tier)
                                .tag("window", window)
                                .tag("level", level)
                                .register(registry));
            }
            counter.increment();
        }

        /** The counter of one reason, registered on its first use. */
        Counter counter(ConcurrentMap<String, Counter> byReason, String name, String reason, String description) {
            Counter counter = byReason.get(reason);
            if (counter == null) {
                counter = byReason.computeIfAbsent(
                        reason,
                        r -> Counter.builder(name)
                                .description(description)
                                .tag("limiter", limiter)
                                .tag("reason", r)
                                .register(registry));
            }
            return counter;
        }
    }
}
