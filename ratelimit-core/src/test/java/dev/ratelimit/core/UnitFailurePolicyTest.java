package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** What each unit's windows do while the store cannot decide: money fails closed unless told otherwise. */
class UnitFailurePolicyTest {

    private static final Window MINUTE = Window.of(100, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(10_000, Duration.ofMinutes(1));
    private static final Window SPEND = Window.of("spend-month", 30_000, Duration.ofDays(30), Window.Unit.USD_MICROS);

    /** A store that is down. */
    private static final class DownStore extends TestStore {
        @Override
        public Evaluation evaluate(StoreRequest request) {
            throw new RateLimiterUnavailableException("store down (test)");
        }
    }

    private static final Amounts COST = Amounts.tokens(100).and(Window.Unit.USD_MICROS, 1_000);

    @Test
    @DisplayName("by default request and token windows fail open, a money window fails closed")
    void moneyFailsClosedByDefault() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore()).build();
        Reservation tokens = limiter.reserve("u", Tier.of("t", MINUTE, TOKENS), 100);
        assertThat(tokens.decision().allowed()).isTrue();
        assertThat(tokens.decision().degraded()).isTrue();
        assertThatThrownBy(() -> limiter.reserve("u", Tier.of("m", MINUTE, TOKENS, SPEND), COST, List.of()))
                .isInstanceOf(RateLimiterUnavailableException.class)
                .hasMessageContaining("store down");
    }

    @Test
    @DisplayName("a unit's own choice wins: money may fail open, tokens closed")
    void perUnitChoice() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore())
                .failOpen(Window.Unit.USD_MICROS, true)
                .failOpen(Window.Unit.TOKENS, false)
                .build();
        assertThat(limiter.reserve("u", Tier.of("m", MINUTE, SPEND), COST, List.of())
                        .decision()
                        .degraded())
                .isTrue();
        assertThatThrownBy(() -> limiter.reserve("u", Tier.of("t", MINUTE, TOKENS), 100))
                .isInstanceOf(RateLimiterUnavailableException.class);
        assertThat(limiter.check("u", Tier.of("r", MINUTE)).degraded())
                .as("requests follow the limiter's failOpen (true)")
                .isTrue();
    }

    @Test
    @DisplayName("failOpen(false) refuses every unit; a unit's true still lets its windows through")
    void limiterClosed() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore())
                .failOpen(false)
                .failOpen(Window.Unit.REQUESTS, true)
                .build();
        assertThat(limiter.check("u", Tier.of("r", MINUTE)).degraded()).isTrue();
        assertThatThrownBy(() -> limiter.reserve("u", Tier.of("t", MINUTE, TOKENS), 100))
                .isInstanceOf(RateLimiterUnavailableException.class);
        assertThatThrownBy(
                        () -> SlidingWindowRateLimiter.builder(new DownStore()).failOpen(null, true))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("unit");
    }
}
