package dev.ratelimit.core;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Binds a circuit breaker's state and calls to Micrometer under the names and tags of
 * resilience4j's own {@code TaggedCircuitBreakerMetrics}.
 *
 * <p>That binding lives in {@code resilience4j-micrometer}, whose POM brings the bulkhead, retry,
 * rate limiter and time limiter modules and micrometer-observation to every user; these few meters
 * keep the core's dependencies to the breaker and micrometer-core while dashboards built on the
 * resilience4j names keep working:
 *
 * <ul>
 *   <li>{@code resilience4j.circuitbreaker.state} (gauge; tags name, state): 1 for the current state,
 *       0 for the others
 *   <li>{@code resilience4j.circuitbreaker.calls} (timer; tags name, kind = successful, failed or
 *       ignored)
 *   <li>{@code resilience4j.circuitbreaker.not.permitted.calls} (counter; tags name, kind =
 *       not_permitted): calls the open breaker refused
 *   <li>{@code resilience4j.circuitbreaker.buffered.calls} and {@code .slow.calls} (gauges; tags
 *       name, kind = successful or failed): the calls in the breaker's sliding window
 *   <li>{@code resilience4j.circuitbreaker.failure.rate} and {@code .slow.call.rate} (gauges; tag
 *       name): percentages over the sliding window, -1 until it holds the minimum number of calls
 * </ul>
 */
final class CircuitBreakerMeters {

    private static final String PREFIX = "resilience4j.circuitbreaker.";

    private CircuitBreakerMeters() {}

    static void bind(CircuitBreaker breaker, MeterRegistry registry) {
        String name = breaker.getName();
        for (CircuitBreaker.State state : CircuitBreaker.State.values()) {
            Gauge.builder(PREFIX + "state", breaker, b -> b.getState() == state ? 1 : 0)
                    .description("The states of the circuit breaker")
                    .tag("name", name)
                    .tag("state", state.name().toLowerCase(Locale.ROOT))
                    .register(registry);
        }
        windowGauge(registry, breaker, "buffered.calls", "failed", m -> m.getNumberOfFailedCalls());
        windowGauge(registry, breaker, "buffered.calls", "successful", m -> m.getNumberOfSuccessfulCalls());
        windowGauge(registry, breaker, "slow.calls", "failed", m -> m.getNumberOfSlowFailedCalls());
        windowGauge(registry, breaker, "slow.calls", "successful", m -> m.getNumberOfSlowSuccessfulCalls());
        Gauge.builder(PREFIX + "failure.rate", breaker, b -> b.getMetrics().getFailureRate())
                .description("The failure rate of the circuit breaker")
                .tag("name", name)
                .register(registry);
        Gauge.builder(PREFIX + "slow.call.rate", breaker, b -> b.getMetrics().getSlowCallRate())
                .description("The slow call rate of the circuit breaker")
                .tag("name", name)
                .register(registry);

        Timer successful = calls(registry, name, "successful", "Total number of successful calls");
        Timer failed = calls(registry, name, "failed", "Total number of failed calls");
        Timer ignored =
                calls(registry, name, "ignored", "Total number of calls which failed but the exception was ignored");
        Counter notPermitted = Counter.builder(PREFIX + "not.permitted.calls")
                .description("Total number of not permitted calls")
                .tag("name", name)
                .tag("kind", "not_permitted")
                .register(registry);
        breaker.getEventPublisher()
                .onSuccess(event -> successful.record(event.getElapsedDuration()))
                .onError(event -> failed.record(event.getElapsedDuration()))
                .onIgnoredError(event -> ignored.record(event.getElapsedDuration()))
                .onCallNotPermitted(event -> notPermitted.increment());
    }

    private static void windowGauge(
            MeterRegistry registry,
            CircuitBreaker breaker,
            String suffix,
            String kind,
            ToDoubleFunction<CircuitBreaker.Metrics> value) {
        Gauge.builder(PREFIX + suffix, breaker, b -> value.applyAsDouble(b.getMetrics()))
                .description("Calls of this kind in the circuit breaker's sliding window")
                .tag("name", breaker.getName())
                .tag("kind", kind)
                .register(registry);
    }

    private static Timer calls(MeterRegistry registry, String name, String kind, String description) {
        return Timer.builder(PREFIX + "calls")
                .description(description)
                .tag("name", name)
                .tag("kind", kind)
                .register(registry);
    }
}
