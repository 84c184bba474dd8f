package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.FailurePolicy;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.threeten.extra.MutableClock;

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

    @Test
    @DisplayName("a window's own policy wins over its unit's; the decision names the windows not checked")
    void perWindowPolicy() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore()).build();
        Window openSpend = SPEND.withFailurePolicy(FailurePolicy.OPEN);
        Decision passed = limiter.reserve("u", Tier.of("m", MINUTE, TOKENS, openSpend), COST, List.of())
                .decision();
        assertThat(passed.degraded()).isTrue();
        assertThat(passed.unchecked()).containsExactly(MINUTE, TOKENS, openSpend);
        Window closedMinute = MINUTE.withFailurePolicy(FailurePolicy.CLOSED);
        assertThatThrownBy(() -> limiter.check("u", Tier.of("r", closedMinute)))
                .isInstanceOf(RateLimiterUnavailableException.class);
        assertThatThrownBy(() -> MINUTE.withFailurePolicy(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("policy");
        assertThatThrownBy(
                        () -> SlidingWindowRateLimiter.builder(new DownStore()).expectedInstances(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("expectedInstances");
    }

    @Test
    @DisplayName("local: three instances on a dead store admit 3 + 3 + 3 of a 10-call window, no more, until it passes")
    void localShares() {
        MutableClock clock = MutableClock.of(Instant.parse("2026-12-04T00:00:00Z"), java.time.ZoneOffset.UTC);
        Window local = Window.of("minute", 10, Duration.ofMinutes(1), Window.Unit.REQUESTS)
                .withFailurePolicy(FailurePolicy.LOCAL);
        Tier tier = Tier.of("t", local, TOKENS);
        int admitted = 0;
        for (int instance = 0; instance < 3; instance++) {
            RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore())
                    .clock(clock)
                    .expectedInstances(3)
                    .build();
            for (int i = 0; i < 10; i++) {
                Decision decision = limiter.reserve("u", tier, 100).decision();
                if (decision.allowed()) {
                    admitted++;
                    assertThat(decision.degraded()).isTrue();
                    assertThat(decision.unchecked())
                            .as("the token window was not checked")
                            .containsExactly(TOKENS);
                } else {
                    assertThat(decision.window()).isEqualTo(local);
                    assertThat(decision.retryAfter()).isEqualTo(Duration.ofMinutes(1));
                }
            }
            if (instance == 2) {
                clock.add(Duration.ofMinutes(1));
                assertThat(limiter.reserve("u", tier, 100).decision().allowed())
                        .as("room again once the window has passed")
                        .isTrue();
            }
        }
        assertThat(admitted).as("3 instances x floor(10 / 3)").isEqualTo(9);
    }

    @Test
    @DisplayName("local calendar day: the 25-hour day of a daylight-saving change in New York holds one share"
            + " until local midnight, where the retry points")
    void localCalendarShares() {
        ZoneId newYork = ZoneId.of("America/New_York");
        // 2026-11-01 is 25 hours long in New York: clocks go back from 2:00 to 1:00
        Instant midnight = LocalDate.of(2026, 11, 1).atStartOfDay(newYork).toInstant();
        Instant nextMidnight = LocalDate.of(2026, 11, 2).atStartOfDay(newYork).toInstant();
        assertThat(Duration.between(midnight, nextMidnight)).isEqualTo(Duration.ofHours(25));
        MutableClock clock = MutableClock.of(midnight, java.time.ZoneOffset.UTC);
        Window day = Window.calendar("day", 4, Window.Unit.REQUESTS, CalendarPeriod.DAY, newYork)
                .withFailurePolicy(FailurePolicy.LOCAL);
        Tier tier = Tier.of("t", day);
        RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore())
                .clock(clock)
                .expectedInstances(2)
                .build();
        assertThat(limiter.check("u", tier).allowed()).isTrue();
        assertThat(limiter.check("u", tier).allowed()).isTrue();
        clock.add(Duration.ofHours(24).plusMinutes(30)); // 23:30 local, a nominal day later
        Decision refused = limiter.check("u", tier);
        assertThat(refused.allowed())
                .as("this instance's share of 2 holds for the whole local day")
                .isFalse();
        assertThat(refused.retryAfter()).as("local midnight").isEqualTo(Duration.ofMinutes(30));
        clock.add(Duration.ofMinutes(30));
        assertThat(limiter.check("u", tier).allowed()).as("a new local day").isTrue();
    }

    @Test
    @DisplayName("local money: a share that an estimate exceeds refuses, shared budgets get their own share")
    void localMoney() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(new DownStore())
                .failurePolicy(Window.Unit.USD_MICROS, FailurePolicy.LOCAL)
                .expectedInstances(2)
                .build();
        Tier tier = Tier.of("m", MINUTE, SPEND); // 30,000 µ$: a share of 15,000
        SharedBudget team = SharedBudget.of("team", SPEND);
        int admitted = 0;
        for (int i = 0; i < 40; i++) {
            if (limiter.reserve("u" + (i % 4), tier, Amounts.of(Window.Unit.USD_MICROS, 1_000), List.of(team))
                    .decision()
                    .allowed()) {
                admitted++;
            }
        }
        assertThat(admitted).as("the team's share: 15 calls of 1,000 µ$").isEqualTo(15);
        assertThat(limiter.reserve("v", tier, Amounts.of(Window.Unit.USD_MICROS, 16_000), List.of())
                        .decision()
                        .allowed())
                .as("more than the share never fits")
                .isFalse();
    }
}
