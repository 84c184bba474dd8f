package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
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
}
