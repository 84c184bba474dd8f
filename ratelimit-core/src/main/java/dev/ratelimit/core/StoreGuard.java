package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiterUnavailableException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Runs store calls behind a circuit breaker and applies the fail-open or fail-closed policy.
 *
 * <p>An open breaker rejects the call before the store is touched, so a dead Redis costs nothing
 * per request once the breaker has seen a handful of failures. The breaker never times calls out:
 * the store's own (driver) timeout bounds each call.
 */
final class StoreGuard {

    private static final System.Logger LOG = System.getLogger(SlidingWindowRateLimiter.class.getName());
    private static final long WARN_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final WindowStore store;
    private final String name;
    private final boolean failOpen;
    private final CircuitBreaker breaker;
    private final LimiterMetrics metrics;
    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_INTERVAL_NANOS);

    StoreGuard(
            WindowStore store,
            String name,
            boolean failOpen,
            CircuitBreakerConfig config,
            LimiterMetrics metrics,
            @Nullable MeterRegistry meterRegistry) {
        this.store = store;
        this.name = name;
        this.failOpen = failOpen;
        this.metrics = metrics;
        this.breaker = CircuitBreaker.of("ratelimit-" + name, config);
        if (meterRegistry != null) {
            CircuitBreakerMeters.bind(breaker, meterRegistry);
        }
    }

    static CircuitBreakerConfig defaultConfig() {
        return CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(10)
                .minimumNumberOfCalls(5)
                .failureRateThreshold(50)
                .slowCallDurationThreshold(Duration.ofSeconds(1))
                .slowCallRateThreshold(50)
                .waitDurationInOpenState(Duration.ofSeconds(5))
                .permittedNumberOfCallsInHalfOpenState(3)
                .recordExceptions(RuntimeException.class)
                .build();
    }

    Decision evaluate(StoreRequest request, Function<Evaluation, Decision> toDecision) {
        if (!breaker.tryAcquirePermission()) {
            return unavailable(request, "circuit breaker is open", null);
        }
        long start = breaker.getCurrentTimestamp();
        Decision decision;
        try {
            // An answer that does not fit the request is a store failure too, not a wrong decision.
            decision = toDecision.apply(store.evaluate(request));
        } catch (RuntimeException e) {
            breaker.onError(breaker.getCurrentTimestamp() - start, breaker.getTimestampUnit(), e);
            return unavailable(request, "store failed", e);
        }
        breaker.onSuccess(breaker.getCurrentTimestamp() - start, breaker.getTimestampUnit());
        metrics.storeHealthy();
        return decision;
    }

    CompletionStage<Decision> evaluateAsync(StoreRequest request, Function<Evaluation, Decision> toDecision) {
        if (!breaker.tryAcquirePermission()) {
            return settle(() -> unavailable(request, "circuit breaker is open", null));
        }
        long start = breaker.getCurrentTimestamp();
        CompletionStage<Evaluation> stage;
        try {
            stage = store.evaluateAsync(request);
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Decision> result = new CompletableFuture<>();
        stage.whenComplete((evaluation, failure) -> {
            long elapsed = breaker.getCurrentTimestamp() - start;
            Throwable cause = failure == null ? null : unwrap(failure);
            if (cause == null) {
                try {
                    Decision decision = toDecision.apply(evaluation);
                    breaker.onSuccess(elapsed, breaker.getTimestampUnit());
                    metrics.storeHealthy();
                    result.complete(decision);
                    return;
                } catch (RuntimeException e) {
                    cause = e;
                }
            }
            breaker.onError(elapsed, breaker.getTimestampUnit(), cause);
            try {
                result.complete(unavailable(request, "store failed", cause));
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    private static CompletionStage<Decision> settle(java.util.function.Supplier<Decision> supplier) {
        try {
            return CompletableFuture.completedFuture(supplier.get());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Decision unavailable(StoreRequest request, String reason, @Nullable Throwable cause) {
        metrics.storeFailure(cause == null ? "circuit_open" : "error", failOpen);
        warn(reason, cause);
        if (!failOpen) {
            String message = "Rate limit store unavailable (" + reason + ")";
            if (cause instanceof RateLimiterUnavailableException e) {
                throw new RateLimiterUnavailableException(message + ": " + e.getMessage(), e);
            }
            throw cause == null
                    ? new RateLimiterUnavailableException(message)
                    : new RateLimiterUnavailableException(message + ": " + cause, cause);
        }
        return Decision.degraded(request.windows().get(0));
    }

    private void warn(String reason, @Nullable Throwable cause) {
        long now = System.nanoTime();
        long last = lastWarning.get();
        if (now - last >= WARN_INTERVAL_NANOS && lastWarning.compareAndSet(last, now)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Rate limiter ''{0}'': {1} (breaker {2}); {3}. Further warnings suppressed for 10 s. Cause: {4}",
                    name,
                    reason,
                    breaker.getState(),
                    failOpen
                            ? "FAILING OPEN: requests are allowed without limits"
                            : "failing closed: requests are refused",
                    cause == null ? "-" : String.valueOf(cause));
        }
    }

    private static Throwable unwrap(Throwable failure) {
        Throwable current = failure;
        while (current instanceof CompletionException && current.getCause() != null) {
            current = current.getCause();
        }
        return current;
    }

    @Override
    public String toString() {
        return "store=" + store + ", breaker=" + breaker.getState() + ", failOpen=" + failOpen;
    }
}
