package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiterTest.SwitchableStore;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Rules about the limiter that no store can fail, so they live here rather than in the conformance
 * kit (where they were sections I and K): bad input is refused before any store call, naming the
 * argument, and a disabled limiter never touches its store.
 */
class LimiterInputAndKillSwitchTest {

    private static final Duration MINUTE = Duration.ofMinutes(1);

    private final SwitchableStore store = new SwitchableStore();
    private final RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
            .failOpen(false)
            .disabled(false)
            .build();

    @Nested
    @DisplayName("input validation: refused before the store is called, naming the argument")
    class InputValidation {

        @Test
        @DisplayName("a null or empty user id")
        void badUser() {
            expectRefused(() -> limiter.check(null, 5, MINUTE), NullPointerException.class, "userId");
            expectRefused(() -> limiter.check("", 5, MINUTE), IllegalArgumentException.class, "userId");
            expectRefused(() -> limiter.checkAsync("", 5, MINUTE), IllegalArgumentException.class, "userId");
        }

        @Test
        @DisplayName("a limit below 1")
        void badLimit() {
            expectRefused(() -> limiter.check("u", 0, MINUTE), IllegalArgumentException.class, "limit");
            expectRefused(() -> limiter.check("u", -1, MINUTE), IllegalArgumentException.class, "limit");
        }

        @Test
        @DisplayName("a null, zero, negative, sub-second or fractional-second window")
        void badWindow() {
            expectRefused(() -> limiter.check("u", 5, null), NullPointerException.class, "window");
            expectRefused(() -> limiter.check("u", 5, Duration.ZERO), IllegalArgumentException.class, "window");
            expectRefused(
                    () -> limiter.check("u", 5, Duration.ofSeconds(-1)), IllegalArgumentException.class, "window");
            expectRefused(
                    () -> limiter.check("u", 5, Duration.ofMillis(500)), IllegalArgumentException.class, "window");
            expectRefused(
                    () -> limiter.check("u", 5, Duration.ofMillis(1_500)), IllegalArgumentException.class, "window");
        }

        @Test
        @DisplayName("a null or empty window list, two windows of one length, or a null tier")
        void badWindowList() {
            expectRefused(() -> limiter.check("u", (List<Window>) null), NullPointerException.class, "windows");
            expectRefused(() -> limiter.check("u", List.of()), IllegalArgumentException.class, "windows");
            expectRefused(
                    () -> limiter.check("u", List.of(new Window("a", 1, MINUTE), new Window("b", 2, MINUTE))),
                    IllegalArgumentException.class,
                    "windows");
            expectRefused(() -> limiter.check("u", (Tier) null), NullPointerException.class, "tier");
        }

        private void expectRefused(ThrowingCallable call, Class<? extends Throwable> type, String argument) {
            assertThatThrownBy(call)
                    .as("expected %s naming '%s'", type.getSimpleName(), argument)
                    .isInstanceOf(type)
                    .hasMessageContaining(argument);
            assertThat(store.calls).as("store calls").hasValue(0);
        }
    }

    @Test
    @DisplayName("kill switch: a disabled limiter allows everything with the full budget and never touches the store")
    void disabledLimiter() {
        RateLimiter disabled = SlidingWindowRateLimiter.builder(store)
                .failOpen(false)
                .disabled(true)
                .build();
        for (int i = 0; i < 20; i++) {
            Decision decision = disabled.check("u", 1, MINUTE);
            assertThat(decision.allowed()).as("allowed").isTrue();
            assertThat(decision.remaining()).as("remaining == limit").isEqualTo(1);
            assertThat(decision.retryAfter()).as("retry").isZero();
            assertThat(disabled.checkAsync("u", 1, MINUTE)
                            .toCompletableFuture()
                            .join()
                            .allowed())
                    .isTrue();
        }
        assertThat(store.calls).as("store calls").hasValue(0);
    }
}
