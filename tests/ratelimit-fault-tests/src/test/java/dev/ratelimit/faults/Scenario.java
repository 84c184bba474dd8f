package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * One pass through every path of the script: request, token and precision windows, a shared
 * budget, rejections with exact retries, a refund, an overrun and a cancel. A store that runs it
 * has every permission it needs.
 */
final class Scenario {

    private Scenario() {}

    static void runsEveryPath(WindowStore store) {
        MutableClock clock = MutableClock.at(Instant.parse("2026-06-01T00:00:00Z"));
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .failOpen(false)
                .build();
        String user = "scenario-" + UUID.randomUUID();
        Tier tier = Tier.of(
                "t",
                Window.of(2, Duration.ofMinutes(1)),
                Window.tokens(1_000, Duration.ofMinutes(1)),
                Window.tokens(5_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1)));
        SharedBudget upstream = SharedBudget.of("upstream-" + user, Window.tokens(10_000, Duration.ofMinutes(1)));
        Reservation first = limiter.reserve(user, tier, 600, List.of(upstream));
        assertThat(first.decision().allowed()).isTrue();
        first.commit(200).toCompletableFuture().join(); // a refund
        Reservation second = limiter.reserve(user, tier, 700, List.of(upstream));
        assertThat(second.decision().allowed()).isTrue();
        second.commit(900).toCompletableFuture().join(); // an overrun
        Decision full = limiter.reserve(user, tier, 1, List.of(upstream)).decision();
        assertThat(full.allowed()).isFalse();
        assertThat(full.retryAfter()).isEqualTo(Duration.ofMinutes(1));
        clock.advance(Duration.ofSeconds(61));
        Reservation third = limiter.reserve(user, tier, 100, List.of(upstream));
        assertThat(third.decision().allowed()).isTrue();
        third.cancel().toCompletableFuture().join();
        Decision tokensOut = limiter.reserve(user, tier, 999, List.of()).decision();
        assertThat(tokensOut.allowed()).isTrue();
        Decision tooMany = limiter.reserve(user, tier, 2, List.of()).decision();
        assertThat(tooMany.allowed()).isFalse();
        assertThat(tooMany.window().isTokens()).isTrue();
    }
}
