package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The limiter's side of {@link LimiterMetrics}: hands each event to the application's metrics and
 * keeps the readings its gauges take ({@link LimiterState}). Without metrics it records nothing.
 */
final class Recorder implements LimiterState {

    private static final List<String> BREAKER_STATES = Arrays.stream(CircuitBreaker.State.values())
            .map(Recorder::lowerCase)
            .toList();

    private final @Nullable LimiterMetrics metrics;
    private final String name;
    private final boolean disabled;
    private volatile boolean failingOpen;
    private volatile boolean unavailable;
    private @Nullable RejectionCache rejections;
    private @Nullable SettleQueue settlements;
    private @Nullable CircuitBreaker breaker;

    Recorder(@Nullable LimiterMetrics metrics, String name, boolean disabled) {
        this.metrics = metrics;
        this.name = name;
        this.disabled = disabled;
    }

    /** Takes the rejection cache whose size the gauges read. */
    void bind(RejectionCache cache) {
        this.rejections = cache;
    }

    /** Takes the settlement queue whose length and age the gauges read. */
    void bind(SettleQueue queue) {
        this.settlements = queue;
    }

    /** Takes the breaker whose state the gauges read, and reports its calls. */
    void bind(CircuitBreaker breaker) {
        this.breaker = breaker;
        LimiterMetrics to = metrics;
        if (to != null) {
            breaker.getEventPublisher()
                    .onSuccess(event -> to.recordBreakerCall(
                            "successful", event.getElapsedDuration().toNanos()))
                    .onError(event -> to.recordBreakerCall(
                            "failed", event.getElapsedDuration().toNanos()))
                    .onIgnoredError(event -> to.recordBreakerCall(
                            "ignored", event.getElapsedDuration().toNanos()))
                    .onCallNotPermitted(event -> to.recordBreakerNotPermitted());
        }
    }

    /** Hands the readings to the metrics, once everything they read is bound. */
    void start() {
        if (metrics != null) {
            metrics.bind(this);
        }
    }

    Decision record(String tier, Decision decision, long nanos) {
        if (metrics != null) {
            metrics.recordDecision(tier, decision, nanos);
        }
        return decision;
    }

    Decision recordDisabled(String tier, Decision decision) {
        if (metrics != null) {
            metrics.recordDisabled(tier, decision);
        }
        return decision;
    }

    /** Records a rejection the rejection cache answered. */
    Decision recordCached(String tier, Decision decision) {
        if (metrics != null) {
            metrics.recordCachedRejection(tier, decision);
        }
        return decision;
    }

    void storeFailure(String reason, boolean failOpen) {
        if (failOpen) {
            failingOpen = true;
        }
        unavailable = true;
        if (metrics != null) {
            metrics.recordStoreFailure(reason);
        }
    }

    void storeHealthy() {
        if (failingOpen) {
            failingOpen = false;
        }
        if (unavailable) {
            unavailable = false;
        }
    }

    void settleFailure(String reason) {
        if (metrics != null) {
            metrics.recordSettleFailure(reason);
        }
    }

    void settleDeferred(String reason) {
        if (metrics != null) {
            metrics.recordSettleDeferred(reason);
        }
    }

    void settleRetried() {
        if (metrics != null) {
            metrics.recordSettleRetried();
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public boolean disabled() {
        return disabled;
    }

    @Override
    public boolean failingOpen() {
        return failingOpen;
    }

    @Override
    public boolean storeUnavailable() {
        return unavailable;
    }

    @Override
    public boolean cachesRejections() {
        return rejections != null;
    }

    @Override
    public int cachedRejections() {
        RejectionCache cache = rejections;
        return cache == null ? 0 : cache.size();
    }

    @Override
    public int pendingSettlements() {
        SettleQueue queue = settlements;
        return queue == null ? 0 : queue.size();
    }

    @Override
    public double oldestPendingSettlementMillis() {
        SettleQueue queue = settlements;
        return queue == null ? 0 : queue.oldestAgeMillis();
    }

    @Override
    public String breakerName() {
        CircuitBreaker cb = breaker;
        return cb == null ? "ratelimit-" + name : cb.getName();
    }

    @Override
    public List<String> breakerStates() {
        return BREAKER_STATES;
    }

    @Override
    public String breakerState() {
        CircuitBreaker cb = breaker;
        return cb == null ? "closed" : lowerCase(cb.getState());
    }

    @Override
    public double breakerFailureRate() {
        CircuitBreaker cb = breaker;
        return cb == null ? -1 : cb.getMetrics().getFailureRate();
    }

    @Override
    public double breakerSlowCallRate() {
        CircuitBreaker cb = breaker;
        return cb == null ? -1 : cb.getMetrics().getSlowCallRate();
    }

    @Override
    public int breakerBufferedCalls(boolean failed) {
        CircuitBreaker cb = breaker;
        if (cb == null) {
            return 0;
        }
        return failed
                ? cb.getMetrics().getNumberOfFailedCalls()
                : cb.getMetrics().getNumberOfSuccessfulCalls();
    }

    @Override
    public int breakerSlowCalls(boolean failed) {
        CircuitBreaker cb = breaker;
        if (cb == null) {
            return 0;
        }
        return failed
                ? cb.getMetrics().getNumberOfSlowFailedCalls()
                : cb.getMetrics().getNumberOfSlowSuccessfulCalls();
    }

    @Override
    public String toString() {
        return "LimiterState{" + name + "}";
    }

    private static String lowerCase(CircuitBreaker.State state) {
        return state.name().toLowerCase(Locale.ROOT);
    }
}
