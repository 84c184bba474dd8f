package dev.ratelimit.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The meters' names and tags, as docs/metrics.md lists them, from a real limiter's work. */
class MicrometerLimiterMetricsTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    /** The in-memory store, failing with the exception the test sets. */
    static final class FailingStore implements WindowStore {
        final WindowStore store = InMemoryWindowStore.create();
        final AtomicReference<@Nullable RuntimeException> failure = new AtomicReference<>();

        @Override
        public Evaluation evaluate(StoreRequest request) {
            RuntimeException e = failure.get();
            if (e != null) {
                throw e;
            }
            return store.evaluate(request);
        }

        @Override
        public Evaluation peek(StoreRequest request) {
            return store.peek(request);
        }

        @Override
        public void settle(Settlement settlement) {
            store.settle(settlement);
        }
    }

    @Test
    @DisplayName("decisions by tier, window and outcome, the check timer, shadow refusals and the rejection cache")
    void decisions() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                .metrics(MicrometerLimiterMetrics.of(registry))
                .name("api")
                .build();
        Tier tier = Tier.of(
                "pro",
                Window.of(2, MINUTE),
                Window.of("tight", 1, MINUTE, Window.Unit.REQUESTS).withMode(Window.Mode.SHADOW));
        for (int i = 0; i < 4; i++) {
            limiter.check("u", tier);
        }
        assertThat(count(
                        "ratelimit.decisions",
                        "limiter",
                        "api",
                        "tier",
                        "pro",
                        "window",
                        "minute",
                        "outcome",
                        "allowed"))
                .isEqualTo(2);
        assertThat(count(
                        "ratelimit.decisions",
                        "limiter",
                        "api",
                        "tier",
                        "pro",
                        "window",
                        "minute",
                        "outcome",
                        "rejected"))
                .as("the third from the store, the fourth from the rejection cache")
                .isEqualTo(2);
        assertThat(registry.get("ratelimit.check").tag("limiter", "api").timer().count())
                .as("cached rejections are not timed")
                .isEqualTo(3);
        assertThat(count(
                        "ratelimit.shadow.refusals",
                        "limiter",
                        "api",
                        "tier",
                        "pro",
                        "window",
                        "tight",
                        "level",
                        "user"))
                .as("the second request: the shadow window of 1 would have refused it")
                .isEqualTo(1);
        assertThat(count("ratelimit.rejection.cache.hits", "limiter", "api")).isEqualTo(1);
        assertThat(gauge("ratelimit.rejection.cache.size", "limiter", "api")).isEqualTo(1);
        assertThat(gauge("ratelimit.disabled", "limiter", "api")).isZero();
        assertThat(gauge("ratelimit.settle.pending", "limiter", "api")).isZero();
        assertThat(registry.get("ratelimit.settle.pending.oldest")
                        .tag("limiter", "api")
                        .timeGauge()
                        .value())
                .isZero();
    }

    @Test
    @DisplayName("a failing store: fail-open and unavailable gauges, failures by reason, the breaker's meters"
            + " under resilience4j's names")
    void failingStore() {
        FailingStore store = new FailingStore();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .metrics(MicrometerLimiterMetrics.of(registry))
                .circuitBreaker(CircuitBreakerConfig.custom()
                        .slidingWindowSize(4)
                        .minimumNumberOfCalls(4)
                        .failureRateThreshold(50)
                        .waitDurationInOpenState(Duration.ofHours(1))
                        .recordExceptions(RuntimeException.class)
                        .ignoreExceptions(IllegalArgumentException.class)
                        .build())
                .build();
        assertThat(state("closed")).isEqualTo(1.0);
        assertThat(gauge("resilience4j.circuitbreaker.failure.rate", "name", "ratelimit-default"))
                .isEqualTo(-1.0);

        limiter.check("u", 5, MINUTE);
        store.failure.set(new IllegalArgumentException("ignored by the breaker's configuration"));
        assertThat(limiter.check("u", 5, MINUTE).degraded()).isTrue();
        store.failure.set(new RateLimiterUnavailableException("store down"));
        limiter.check("u", 5, MINUTE);
        store.failure.set(null);
        limiter.check("u", 5, MINUTE);
        assertThat(gauge("ratelimit.fail.open", "limiter", "default"))
                .as("healthy again")
                .isZero();
        store.failure.set(new RateLimiterUnavailableException("store down"));
        limiter.check("u", 5, MINUTE);

        assertThat(gauge("ratelimit.fail.open", "limiter", "default")).isEqualTo(1.0);
        assertThat(gauge("ratelimit.store.unavailable", "limiter", "default")).isEqualTo(1.0);
        assertThat(count("ratelimit.store.failures", "limiter", "default", "reason", "error"))
                .isEqualTo(3);
        assertThat(calls("successful")).isEqualTo(2);
        assertThat(calls("failed")).isEqualTo(2);
        assertThat(calls("ignored")).isEqualTo(1);
        assertThat(gauge("resilience4j.circuitbreaker.buffered.calls", "name", "ratelimit-default", "kind", "failed"))
                .isEqualTo(2.0);
        assertThat(gauge("resilience4j.circuitbreaker.failure.rate", "name", "ratelimit-default"))
                .isEqualTo(50.0);
        assertThat(state("open")).as("half of 4 calls failed").isEqualTo(1.0);
        assertThat(state("closed")).isZero();

        limiter.check("u", 5, MINUTE);
        limiter.check("u", 5, MINUTE);
        assertThat(count(
                        "resilience4j.circuitbreaker.not.permitted.calls",
                        "name",
                        "ratelimit-default",
                        "kind",
                        "not_permitted"))
                .isEqualTo(2);
        assertThat(count("ratelimit.store.failures", "limiter", "default", "reason", "circuit_open"))
                .isEqualTo(2);
        assertThat(registry.get("resilience4j.circuitbreaker.state").gauges())
                .as("one gauge per state, so that a dashboard can sum them")
                .hasSize(CircuitBreaker.State.values().length)
                .extracting(Gauge::value)
                .containsOnly(0.0, 1.0)
                .containsOnlyOnce(1.0);
    }

    @Test
    @DisplayName("a disabled limiter: the disabled gauge and its decisions")
    void disabled() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                .metrics(MicrometerLimiterMetrics.of(registry))
                .disabled(true)
                .build();
        limiter.check("u", TierPolicy.defaults().resolve("free"));
        assertThat(gauge("ratelimit.disabled", "limiter", "default")).isEqualTo(1.0);
        assertThat(count("ratelimit.decisions", "tier", "free", "window", "minute", "outcome", "disabled"))
                .isEqualTo(1);
    }

    @Test
    @DisplayName("one instance serves one limiter: a second build with it is refused, naming the first")
    void oneLimiterEach() {
        MicrometerLimiterMetrics metrics = MicrometerLimiterMetrics.of(registry);
        SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                .metrics(metrics)
                .name("first")
                .build();
        assertThatThrownBy(() -> SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                        .metrics(metrics)
                        .name("second")
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("limiter 'first'");
        assertThatThrownBy(() -> MicrometerLimiterMetrics.of(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("registry");
    }

    @Test
    @DisplayName("a shadow refusal counts under its shared budget's level: the name up to its first colon")
    void shadowLevels() {
        assertThat(MicrometerLimiterMetrics.level(null)).isEqualTo("user");
        assertThat(MicrometerLimiterMetrics.level("team:research")).isEqualTo("team");
        assertThat(MicrometerLimiterMetrics.level("research")).isEqualTo("shared");
    }

    private long count(String name, String... tags) {
        return (long) registry.get(name).tags(tags).counter().count();
    }

    private double gauge(String name, String... tags) {
        return registry.get(name).tags(tags).gauge().value();
    }

    private double state(String state) {
        return gauge("resilience4j.circuitbreaker.state", "name", "ratelimit-default", "state", state);
    }

    private long calls(String kind) {
        return registry.get("resilience4j.circuitbreaker.calls")
                .tags("name", "ratelimit-default", "kind", kind)
                .timer()
                .count();
    }
}
