package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section B: the basic contract of one window. */
interface BasicRules extends ConformanceSection {

    @Test
    @DisplayName("B1 allows up to the limit and remaining counts down to 0")
    default void allowsUpToTheLimit() {
        String user = user("b1");
        for (int expected = 9; expected >= 0; expected--) {
            Decision decision = limiter().check(user, 10, MINUTE);
            assertThat(decision.allowed())
                    .as("[B1] check %d of a 10-limit window must be allowed", 10 - expected)
                    .isTrue();
            assertThat(decision.remaining())
                    .as("[B1] remaining after check %d of 10", 10 - expected)
                    .isEqualTo(expected);
            assertThat(decision.limit()).as("[B1] limit").isEqualTo(10);
            assertThat(decision.retryAfter())
                    .as("[B1] an allowed check has no retry")
                    .isZero();
            assertThat(decision.retryAfterSeconds())
                    .as("[B1] an allowed check has no retry in seconds either")
                    .isZero();
            assertThat(decision.degraded())
                    .as("[B1] a decision the store made is not degraded")
                    .isFalse();
        }
    }

    @Test
    @DisplayName("B2 rejects past the limit with remaining 0 and a positive retry")
    default void rejectsPastTheLimit() {
        String user = user("b2");
        assertThat(allowedOf(3, user, 3, MINUTE))
                .as("[B2] the first 3 checks of a 3-limit window must be allowed")
                .isEqualTo(3);
        Decision decision = limiter().check(user, 3, MINUTE);
        assertThat(decision.allowed())
                .as("[B2] the check past the limit must be rejected")
                .isFalse();
        assertThat(decision.remaining()).as("[B2] remaining on rejection").isZero();
        assertThat(decision.window().length())
                .as("[B2] the rejecting window's length")
                .isEqualTo(MINUTE);
        assertThat(decision.retryAfter()).as("[B2] a rejection's retryAfter").isPositive();
        assertThat(decision.retryAfterSeconds())
                .as("[B2] a rejection's retryAfterSeconds, within the window")
                .isBetween(1L, 60L);
    }

    @Test
    @DisplayName("B3 distinct user ids never share a budget, whatever characters they hold")
    default void distinctUsersNeverShare() {
        List<String> ids = List.of(
                "a",
                "a:60",
                "a:b",
                "a:b:60",
                "{a}",
                "{a}b}",
                "{a",
                "a}",
                "}{",
                "a b",
                " a",
                "a ",
                "ünï-cødé-用户-🙂",
                "ratelimit:a:60",
                "x".repeat(10_000),
                "x".repeat(10_001));
        for (String id : ids) {
            String user = user(id);
            assertThat(limiter().check(user, 1, MINUTE).allowed())
                    .as("[B3] first check of user '%s' must be allowed: its budget is its own", abbreviate(id))
                    .isTrue();
        }
        for (String id : ids) {
            assertThat(limiter().check(user(id), 1, MINUTE).allowed())
                    .as("[B3] second check of user '%s' must be rejected", abbreviate(id))
                    .isFalse();
        }
    }

    @Test
    @DisplayName("B4 windows of different lengths keep separate logs for one user")
    default void windowLengthsAreSeparate() {
        String user = user("b4");
        assertThat(allowedOf(2, user, 2, MINUTE))
                .as("[B4] the first 2 checks of a 2-per-minute window must be allowed")
                .isEqualTo(2);
        assertThat(limiter().check(user, 2, MINUTE).allowed())
                .as("[B4] the third check of a 2-per-minute window must be rejected")
                .isFalse();
        assertThat(allowedOf(3, user, 2, HOUR))
                .as("[B4] an hour window must not see the minute window's entries")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("B5 a rejected check records nothing")
    default void rejectionRecordsNothing() {
        String user = user("b5");
        assertThat(limiter().check(user, 2, MINUTE).allowed())
                .as("[B5] the first check at t0")
                .isTrue();
        clock().advance(Duration.ofSeconds(10));
        assertThat(limiter().check(user, 2, MINUTE).allowed())
                .as("[B5] the second check at t0 + 10 s")
                .isTrue();
        for (int i = 0; i < 5; i++) {
            clock().advance(Duration.ofSeconds(5));
            assertThat(limiter().check(user, 2, MINUTE).allowed())
                    .as("[B5] check %d at t0 + %d s, with 2 of 2 held, must be rejected", i + 3, 15 + 5 * i)
                    .isFalse();
        }
        clock().set(START.plus(MINUTE)); // the t0 entry has left
        assertThat(allowedOf(3, user, 2, MINUTE))
                .as("[B5] after the first entry leaves, exactly one slot is free: rejections must not be recorded")
                .isEqualTo(1);
    }

    private static String abbreviate(String id) {
        return id.length() > 40 ? id.substring(0, 20) + "…(" + id.length() + " chars)" : id;
    }
}
