package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section T: the store's own clock. */
interface StoreTimeRules extends ConformanceSection {

    @Test
    @DisplayName("T1 without an injected clock the store's own time counts and rejects")
    default void storeClock() {
        RateLimiter ownTime =
                SlidingWindowRateLimiter.builder(store()).failOpen(false).build();
        String user = user("t1");
        for (int i = 0; i < 3; i++) {
            assertThat(ownTime.check(user, 3, MINUTE).allowed())
                    .as("[T1] check %d of 3 on the store's own time must be allowed", i + 1)
                    .isTrue();
        }
        Decision rejected = ownTime.check(user, 3, MINUTE);
        assertThat(rejected.allowed())
                .as("[T1] the fourth check on the store's own time must be rejected")
                .isFalse();
        assertThat(rejected.retryAfter())
                .as("[T1] the retry on the store's own time is within the window")
                .isPositive()
                .isLessThanOrEqualTo(MINUTE);
    }

    @Test
    @DisplayName("T2 without an injected clock a settlement takes the store's own time: an overrun counts from now")
    default void storeClockSettles() {
        RateLimiter ownTime =
                SlidingWindowRateLimiter.builder(store()).failOpen(false).build();
        Tier tier = Tier.of("t2", Window.tokens(1_000, MINUTE));
        String user = user("t2");
        Reservation reservation = ownTime.reserve(user, tier, 500);
        assertThat(reservation.decision().allowed())
                .as("[T2] 500 of 1,000 on the store's own time")
                .isTrue();
        settled(reservation.commit(1_200));
        Decision rejected = ownTime.reserve(user, tier, 1).decision();
        assertThat(rejected.allowed())
                .as("[T2] the overrun of 700, settled on the store's time, is still in the window")
                .isFalse();
        assertThat(used(rejected, tier.windows().get(0), null))
                .as("[T2] tokens counted")
                .isEqualTo(1_200);
    }
}
