package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.threeten.extra.MutableClock;

class SlidingWindowRateLimiterTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Duration OPEN_WAIT = Duration.ofMillis(200);

    /** A store whose health the test switches; it answers "allowed, 1 used" when healthy. */
    static final class SwitchableStore extends TestStore {
        final AtomicBoolean healthy = new AtomicBoolean(true);
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public Evaluation evaluate(StoreRequest request) {
            calls.incrementAndGet();
            if (!healthy.get()) {
                throw new RateLimiterUnavailableException("redis is down");
            }
            long[] used = new long[request.windows().size()];
            long[] reset = new long[used.length];
            java.util.Arrays.fill(used, 1);
            java.util.Arrays.fill(reset, 60_000);
            return Evaluation.allowed(0, used, reset);
        }

        @Override
        public java.util.concurrent.CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
            calls.incrementAndGet();
            if (!healthy.get()) {
                return CompletableFuture.failedFuture(new RateLimiterUnavailableException("redis is down"));
            }
            calls.decrementAndGet();
            return CompletableFuture.completedFuture(evaluate(request));
        }
    }

    private static CircuitBreakerConfig fastBreaker() {
        return CircuitBreakerConfig.custom()
                .slidingWindowSize(5)
                .minimumNumberOfCalls(3)
                .failureRateThreshold(50)
                .waitDurationInOpenState(OPEN_WAIT)
                .permittedNumberOfCallsInHalfOpenState(1)
                .build();
    }

    @AfterEach
    void clearProperty() {
        System.clearProperty(SlidingWindowRateLimiter.DISABLED_PROPERTY);
    }

    @Nested
    @DisplayName("kill switch")
    class KillSwitch {

        @Test
        @DisplayName("the system property disables a limiter built without an explicit choice")
        void propertyDisables() {
            System.setProperty(SlidingWindowRateLimiter.DISABLED_PROPERTY, "true");
            SwitchableStore store = new SwitchableStore();
            RecordingMetrics metrics = new RecordingMetrics();
            RateLimiter limiter =
                    SlidingWindowRateLimiter.builder(store).metrics(metrics).build();
            Decision decision = limiter.check("u", TierPolicy.defaults().resolve("free"));
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).isEqualTo(decision.limit()).isEqualTo(5);
            assertThat(store.calls).hasValue(0);
            assertThat(metrics.state().disabled()).isTrue();
            assertThat(metrics.count("decision free minute disabled")).isEqualTo(1);
        }

        @Test
        @DisplayName("the property set to false keeps the limiter on, and an explicit choice wins over it")
        void explicitChoiceWins() {
            System.setProperty(SlidingWindowRateLimiter.DISABLED_PROPERTY, "false");
            SwitchableStore store = new SwitchableStore();
            SlidingWindowRateLimiter.builder(store).build().check("u", 5, MINUTE);
            assertThat(store.calls).hasValue(1);

            System.setProperty(SlidingWindowRateLimiter.DISABLED_PROPERTY, "true");
            RecordingMetrics metrics = new RecordingMetrics();
            SlidingWindowRateLimiter.builder(store)
                    .disabled(false)
                    .metrics(metrics)
                    .build()
                    .check("u", 5, MINUTE);
            assertThat(store.calls).hasValue(2);
            assertThat(metrics.state().disabled()).isFalse();
        }
    }

    @Nested
    @DisplayName("fail-open")
    class FailOpen {

        @Test
        @DisplayName("a failing store lets checks through as degraded, raises the gauge and counts failures")
        void degradedWhileFailing() {
            SwitchableStore store = new SwitchableStore();
            RecordingMetrics metrics = new RecordingMetrics();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .metrics(metrics)
                    .circuitBreaker(fastBreaker())
                    .build();
            assertThat(limiter.check("u", 5, MINUTE).degraded()).isFalse();
            assertThat(metrics.state().failingOpen()).isFalse();

            store.healthy.set(false);
            Decision decision = limiter.check("u", 5, MINUTE);
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.degraded()).isTrue();
            assertThat(decision.remaining()).isEqualTo(5);
            assertThat(metrics.state().failingOpen()).isTrue();
            assertThat(metrics.state().storeUnavailable()).isTrue();
            assertThat(metrics.count("store.failure error")).isEqualTo(1);
            assertThat(metrics.count("breaker.call failed")).isEqualTo(1);
        }

        @Test
        @DisplayName("an open breaker makes no store call at all, then a half-open probe closes it and the gauge falls")
        void openBreakerSkipsTheStore() {
            SwitchableStore store = new SwitchableStore();
            RecordingMetrics metrics = new RecordingMetrics();
            // the breaker's open wait runs on its own clock; moving it by hand replaces a sleep
            MutableClock breakerTime = MutableClock.epochUTC();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .metrics(metrics)
                    .circuitBreaker(CircuitBreakerConfig.from(fastBreaker())
                            .clock(breakerTime)
                            .build())
                    .build();
            store.healthy.set(false);
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.check("u", 5, MINUTE).degraded()).isTrue();
            }
            int callsWhenOpened = store.calls.get();
            for (int i = 0; i < 100; i++) {
                assertThat(limiter.check("u", 5, MINUTE).degraded()).isTrue();
            }
            assertThat(store.calls)
                    .as("no store call while the breaker is open")
                    .hasValue(callsWhenOpened);
            assertThat(metrics.count("store.failure circuit_open")).isEqualTo(100);
            assertThat(metrics.count("breaker.not.permitted")).isEqualTo(100);
            assertThat(metrics.state().breakerState()).isEqualTo("open");
            assertThat(metrics.state().breakerFailureRate()).isEqualTo(100.0);

            store.healthy.set(true);
            breakerTime.add(OPEN_WAIT.minusMillis(1));
            assertThat(limiter.check("u", 5, MINUTE).degraded())
                    .as("1 ms before the open wait ends")
                    .isTrue();
            assertThat(store.calls).hasValue(callsWhenOpened);
            breakerTime.add(Duration.ofMillis(2));
            Decision probe = limiter.check("u", 5, MINUTE);
            assertThat(store.calls).as("the half-open probe reaches the store").hasValue(callsWhenOpened + 1);
            assertThat(probe.degraded()).isFalse();
            assertThat(metrics.state().failingOpen()).isFalse();
            assertThat(metrics.state().storeUnavailable()).isFalse();
            assertThat(metrics.state().breakerState()).isEqualTo("closed");
        }

        @Test
        @DisplayName("failOpen(false) turns store failures and an open breaker into RateLimiterUnavailableException")
        void failClosed() {
            SwitchableStore store = new SwitchableStore();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .failOpen(false)
                    .circuitBreaker(fastBreaker())
                    .build();
            store.healthy.set(false);
            for (int i = 0; i < 5; i++) {
                assertThatThrownBy(() -> limiter.check("u", 5, MINUTE))
                        .isInstanceOf(RateLimiterUnavailableException.class)
                        .hasMessageContaining("unavailable");
            }
            assertThatThrownBy(() -> limiter.checkAsync("u", 5, MINUTE)
                            .toCompletableFuture()
                            .join())
                    .isInstanceOf(CompletionException.class)
                    .hasCauseInstanceOf(RateLimiterUnavailableException.class);
        }

        @Test
        @DisplayName("asynchronous checks fail open too")
        void asyncFailOpen() {
            SwitchableStore store = new SwitchableStore();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
            store.healthy.set(false);
            Decision decision = limiter.checkAsync("u", List.of(Window.of(5, MINUTE)))
                    .toCompletableFuture()
                    .join();
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.degraded()).isTrue();
        }
    }

    @Nested
    @DisplayName("decisions and metrics")
    class Decisions {

        @Test
        @DisplayName("decisions are counted by tier, window and outcome, and checks are timed")
        void metrics() {
            RecordingMetrics metrics = new RecordingMetrics();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(new SwitchableStore())
                    .metrics(metrics)
                    .name("api")
                    .build();
            limiter.check("u", TierPolicy.defaults().resolve("pro"));
            assertThat(metrics.state().name()).isEqualTo("api");
            assertThat(metrics.state().breakerName()).isEqualTo("ratelimit-api");
            assertThat(metrics.count("decision pro minute allowed")).isEqualTo(1);
            assertThat(metrics.count("timed")).isEqualTo(1);
        }

        @Test
        @DisplayName("a store answer that does not fit the request is a store failure, not a wrong decision")
        void malformedAnswer() {
            WindowStore liar = Stores.answering(request -> Evaluation.allowed(0, new long[] {1}, new long[] {1}));
            RateLimiter limiter =
                    SlidingWindowRateLimiter.builder(liar).failOpen(false).build();
            assertThatThrownBy(() -> limiter.check("u", TierPolicy.defaults().resolve("free")))
                    .isInstanceOf(RateLimiterUnavailableException.class);
            assertThat(SlidingWindowRateLimiter.builder(liar)
                            .build()
                            .check("u", TierPolicy.defaults().resolve("free"))
                            .degraded())
                    .as("failing open on a malformed answer")
                    .isTrue();
        }
    }
}
