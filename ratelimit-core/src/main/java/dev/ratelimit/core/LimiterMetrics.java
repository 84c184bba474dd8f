package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The limiter's Micrometer meters; a no-op when no registry is given.
 *
 * <ul>
 *   <li>{@code ratelimit.decisions} (counter; tags limiter, tier, window, outcome = allowed,
 *       rejected, degraded or disabled)
 *   <li>{@code ratelimit.shadow.refusals} (counter; tags limiter, tier, window, level = user, or a
 *       shared budget's name up to its first colon, else shared): requests a {@linkplain
 *       dev.ratelimit.api.Window#inShadow() shadow window} would have refused, admitted
 *   <li>{@code ratelimit.check} (timer; tag limiter): latency of checks that reached the guard
 *   <li>{@code ratelimit.store.failures} (counter; tags limiter, reason = error or circuit_open)
 *   <li>{@code ratelimit.fail.open} (gauge; tag limiter): 1 while checks are let through because the
 *       store fails
 *   <li>{@code ratelimit.store.unavailable} (gauge; tag limiter): 1 while the store fails, whether
 *       the limiter fails open or closed: the alerting metric
 *   <li>{@code ratelimit.settle.deferred} (counter; tags limiter, reason = error, circuit_open or in_doubt):
 *       settlements the store did not take at once, queued to be retried
 *   <li>{@code ratelimit.settle.retried} (counter; tag limiter): queued settlements the store took
 *       on a retry
 *   <li>{@code ratelimit.settle.pending} (gauge; tag limiter): settlements queued or being retried
 *   <li>{@code ratelimit.settle.pending.oldest} (time gauge; tag limiter): how long the oldest
 *       queued settlement has waited
 *   <li>{@code ratelimit.settle.failures} (counter; tags limiter, reason = expired, queue_full):
 *       settlements given up (the estimate stays charged until its window passes)
 *   <li>{@code ratelimit.disabled} (gauge; tag limiter): 1 when the kill switch is on
 *   <li>{@code ratelimit.rejection.cache.hits} (counter; tag limiter): rejections answered by the
 *       local rejection cache, with no store call (they are counted in {@code ratelimit.decisions} too)
 *   <li>{@code ratelimit.rejection.cache.size} (gauge; tag limiter): users with a cached rejection
 * </ul>
 */
class LimiterMetrics {

    private static final LimiterMetrics NOOP = new LimiterMetrics();

    LimiterMetrics() {}

    static LimiterMetrics create(@Nullable MeterRegistry registry, String limiter, boolean disabled) {
        return registry == null ? NOOP : new Registered(registry, limiter, disabled);
    }

    Decision record(String tier, Decision decision, long nanos) {
        return decision;
    }

    Decision recordDisabled(String tier, Decision decision) {
        return decision;
    }

    /** Records a rejection the rejection cache answered. */
    Decision recordCached(String tier, Decision decision) {
        return record(tier, decision, 0);
    }

    void bind(RejectionCache cache) {}

    /**
     * The level a shadow refusal counts under: {@code user} for the user's own window; for a shared
     * budget, its name up to the first colon ({@code team} for {@code team:research}), so that
     * budgets named {@code <level>:<name>} count by level and the tag stays bounded, else {@code
     * shared}.
     */
    static String level(@org.jspecify.annotations.Nullable String budget) {
        if (budget == null) {
            return "user";
        }
        int colon = budget.indexOf(':');
        return colon > 0 ? budget.substring(0, colon) : "shared";
    }

    void storeFailure(String reason, boolean failingOpen) {}

    void storeHealthy() {}

    void settleFailure(String reason) {}

    void settleDeferred(String reason) {}

    void settleRetried() {}

    void bind(SettleQueue queue) {}

    private static final class Registered extends LimiterMetrics {

        private final MeterRegistry registry;
        private final String limiter;
        private final Timer latency;
        private final AtomicInteger failingOpen = new AtomicInteger();
        private final AtomicInteger unavailable = new AtomicInteger();
        private final ConcurrentMap<String, Counter> settleFailures = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> settleDeferred = new ConcurrentHashMap<>();
        private final Counter settleRetried;
        private final ConcurrentMap<String, Counter> decisions = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> shadowRefusals = new ConcurrentHashMap<>();
        private final ConcurrentMap<String, Counter> failures = new ConcurrentHashMap<>();
        private final Counter cacheHits;

        Registered(MeterRegistry registry, String limiter, boolean disabled) {
            this.registry = registry;
            this.limiter = limiter;
            if (registry.find("ratelimit.fail.open").tag("limiter", limiter).gauge() != null) {
                // Micrometer keeps the first gauge: this limiter's alerting metric would be invisible.
                System.getLogger(SlidingWindowRateLimiter.class.getName())
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
            Gauge.builder("ratelimit.fail.open", failingOpen, AtomicInteger::get)
                    .description("1 while requests are let through unlimited because the store fails")
                    .tag("limiter", limiter)
                    .register(registry);
            Gauge.builder("ratelimit.store.unavailable", unavailable, AtomicInteger::get)
                    .description("1 while the rate-limit store fails, failing open or closed")
                    .tag("limiter", limiter)
                    .register(registry);
            this.settleRetried = Counter.builder("ratelimit.settle.retried")
                    .description("Queued settlements the store took on a retry")
                    .tag("limiter", limiter)
                    .register(registry);
            this.cacheHits = Counter.builder("ratelimit.rejection.cache.hits")
                    .description("Rejections answered by the local rejection cache, with no store call")
                    .tag("limiter", limiter)
                    .register(registry);
            Gauge.builder("ratelimit.disabled", () -> disabled ? 1 : 0)
                    .description("1 when the rate limiter's kill switch is on")
                    .tag("limiter", limiter)
                    .register(registry);
        }

        @Override
        Decision record(String tier, Decision decision, long nanos) {
            latency.record(nanos, TimeUnit.NANOSECONDS);
            count(tier, decision, decision.degraded() ? "degraded" : decision.allowed() ? "allowed" : "rejected");
            for (Decision.ShadowRefusal refusal : decision.shadowRefusals()) {
                countShadow(tier, refusal);
            }
            return decision;
        }

        private void countShadow(String tier, Decision.ShadowRefusal refusal) {
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

        @Override
        Decision recordCached(String tier, Decision decision) {
            cacheHits.increment();
            count(tier, decision, "rejected");
            return decision;
        }

        @Override
        void bind(RejectionCache cache) {
            Gauge.builder("ratelimit.rejection.cache.size", cache, RejectionCache::size)
                    .description("Users with a cached rejection")
                    .tag("limiter", limiter)
                    .register(registry);
        }

        @Override
        Decision recordDisabled(String tier, Decision decision) {
            count(tier, decision, "disabled");
            return decision;
        }

        private void count(String tier, Decision decision, String outcome) {
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

        @Override
        void storeFailure(String reason, boolean failOpen) {
            if (failOpen) {
                failingOpen.set(1);
            }
            unavailable.set(1);
            Counter counter = failures.get(reason);
            if (counter == null) {
                counter = failures.computeIfAbsent(
                        reason,
                        r -> Counter.builder("ratelimit.store.failures")
                                .description(
                                        "Checks whose store call failed or was refused by the open circuit breaker")
                                .tag("limiter", limiter)
                                .tag("reason", r)
                                .register(registry));
            }
            counter.increment();
        }

        @Override
        void storeHealthy() {
            if (failingOpen.get() != 0) {
                failingOpen.set(0);
            }
            if (unavailable.get() != 0) {
                unavailable.set(0);
            }
        }

        @Override
        void settleFailure(String reason) {
            settleFailures
                    .computeIfAbsent(
                            reason,
                            r -> Counter.builder("ratelimit.settle.failures")
                                    .description("Reservation settlements given up; the estimate stays until its window"
                                            + " passes")
                                    .tag("limiter", limiter)
                                    .tag("reason", r)
                                    .register(registry))
                    .increment();
        }

        @Override
        void settleDeferred(String reason) {
            settleDeferred
                    .computeIfAbsent(
                            reason,
                            r -> Counter.builder("ratelimit.settle.deferred")
                                    .description("Settlements the store did not take at once, queued to be retried")
                                    .tag("limiter", limiter)
                                    .tag("reason", r)
                                    .register(registry))
                    .increment();
        }

        @Override
        void settleRetried() {
            settleRetried.increment();
        }

        @Override
        void bind(SettleQueue queue) {
            Gauge.builder("ratelimit.settle.pending", queue, SettleQueue::size)
                    .description("Settlements queued for the store or being retried")
                    .tag("limiter", limiter)
                    .register(registry);
            TimeGauge.builder(
                            "ratelimit.settle.pending.oldest",
                            queue,
                            TimeUnit.MILLISECONDS,
                            SettleQueue::oldestAgeMillis)
                    .description("How long the oldest queued settlement has waited for the store")
                    .tag("limiter", limiter)
                    .register(registry);
        }
    }
}
