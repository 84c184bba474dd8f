package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class CircuitBreakerMetersTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final CircuitBreaker breaker = CircuitBreaker.of(
            "ratelimit-test",
            CircuitBreakerConfig.custom()
                    .slidingWindowSize(4)
                    .minimumNumberOfCalls(4)
                    .failureRateThreshold(50)
                    .recordExceptions(IllegalStateException.class)
                    .ignoreExceptions(IllegalArgumentException.class)
                    .build());

    @Test
    @DisplayName("the state gauges, call timers, failure rate and not-permitted counter follow the breaker")
    void metersFollowTheBreaker() {
        CircuitBreakerMeters.bind(breaker, registry);
        assertThat(state("closed")).isEqualTo(1.0);
        assertThat(state("open")).isZero();
        assertThat(gauge("resilience4j.circuitbreaker.failure.rate")).isEqualTo(-1.0);

        succeed();
        fail(new IllegalArgumentException("ignored by the config"));
        fail(new IllegalStateException("recorded"));
        succeed();
        fail(new IllegalStateException("recorded"));

        assertThat(calls("successful")).isEqualTo(2);
        assertThat(calls("failed")).isEqualTo(2);
        assertThat(calls("ignored")).isEqualTo(1);
        assertThat(registry.get("resilience4j.circuitbreaker.buffered.calls")
                        .tag("name", "ratelimit-test")
                        .tag("kind", "failed")
                        .gauge()
                        .value())
                .isEqualTo(2.0);
        assertThat(gauge("resilience4j.circuitbreaker.failure.rate")).isEqualTo(50.0);
        assertThat(state("open")).as("50% of 4 calls failed").isEqualTo(1.0);
        assertThat(state("closed")).isZero();

        assertThat(breaker.tryAcquirePermission()).isFalse();
        assertThat(breaker.tryAcquirePermission()).isFalse();
        assertThat(registry.get("resilience4j.circuitbreaker.not.permitted.calls")
                        .tag("name", "ratelimit-test")
                        .tag("kind", "not_permitted")
                        .counter()
                        .count())
                .isEqualTo(2.0);

        breaker.transitionToHalfOpenState();
        assertThat(state("half_open")).isEqualTo(1.0);
        assertThat(state("open")).isZero();
    }

    @Test
    @DisplayName("every state of the breaker has its gauge, so a dashboard can sum them")
    void oneGaugePerState() {
        CircuitBreakerMeters.bind(breaker, registry);
        assertThat(registry.get("resilience4j.circuitbreaker.state").gauges())
                .hasSize(CircuitBreaker.State.values().length);
        double sum = registry.get("resilience4j.circuitbreaker.state").gauges().stream()
                .mapToDouble(g -> g.value())
                .sum();
        assertThat(sum).isEqualTo(1.0);
    }

    private void succeed() {
        assertThat(breaker.tryAcquirePermission()).isTrue();
        breaker.onSuccess(3, TimeUnit.MILLISECONDS);
    }

    private void fail(Throwable error) {
        assertThat(breaker.tryAcquirePermission()).isTrue();
        breaker.onError(3, TimeUnit.MILLISECONDS, error);
    }

    private double state(String state) {
        return registry.get("resilience4j.circuitbreaker.state")
                .tag("name", "ratelimit-test")
                .tag("state", state)
                .gauge()
                .value();
    }

    private double gauge(String name) {
        return registry.get(name).tag("name", "ratelimit-test").gauge().value();
    }

    private long calls(String kind) {
        return registry.get("resilience4j.circuitbreaker.calls")
                .tag("name", "ratelimit-test")
                .tag("kind", kind)
                .timer()
                .count();
    }
}
