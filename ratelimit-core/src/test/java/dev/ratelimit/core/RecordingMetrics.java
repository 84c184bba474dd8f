package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limiter's metrics as counts of what it reported, each under a key such as {@code decision pro
 * minute allowed} or {@code store.failure error}; {@link #state()} reads the bound readings.
 */
final class RecordingMetrics implements LimiterMetrics {

    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private volatile LimiterState state;

    LimiterState state() {
        return Objects.requireNonNull(state, "not bound to a limiter");
    }

    /** How often the event of this key was reported. */
    long count(String key) {
        AtomicLong count = counts.get(key);
        return count == null ? 0 : count.get();
    }

    private void add(String key) {
        counts.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
    }

    @Override
    public void bind(LimiterState limiter) {
        state = limiter;
    }

    @Override
    public void recordDecision(String tier, Decision decision, long nanos) {
        String outcome = decision.degraded() ? "degraded" : decision.allowed() ? "allowed" : "rejected";
        add("decision " + tier + " " + decision.window().name() + " " + outcome);
        add("timed");
    }

    @Override
    public void recordDisabled(String tier, Decision decision) {
        add("decision " + tier + " " + decision.window().name() + " disabled");
    }

    @Override
    public void recordCachedRejection(String tier, Decision decision) {
        add("cached " + tier + " " + decision.window().name());
    }

    @Override
    public void recordStoreFailure(String reason) {
        add("store.failure " + reason);
    }

    @Override
    public void recordSettleDeferred(String reason) {
        add("settle.deferred " + reason);
    }

    @Override
    public void recordSettleRetried() {
        add("settle.retried");
    }

    @Override
    public void recordSettleFailure(String reason) {
        add("settle.failure " + reason);
    }

    @Override
    public void recordBreakerCall(String kind, long nanos) {
        add("breaker.call " + kind);
    }

    @Override
    public void recordBreakerNotPermitted() {
        add("breaker.not.permitted");
    }
}
