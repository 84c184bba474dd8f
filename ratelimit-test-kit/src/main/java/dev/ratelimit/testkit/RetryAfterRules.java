package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section R: honest retry and reset times. */
interface RetryAfterRules extends ConformanceSection {

    @Test
    @DisplayName("R1 a full request window's retryAfter is the time until its oldest entry leaves, to the millisecond")
    default void retryAfterToTheMillisecond() {
        String user = user("r1");
        clock().advanceMillis(1_000);
        assertThat(limiter().check(user, 2, MINUTE).allowed())
                .as("[R1] the first check, at t = 1 000 ms")
                .isTrue();
        clock().advanceMillis(1_234);
        assertThat(limiter().check(user, 2, MINUTE).allowed())
                .as("[R1] the second check, at t = 2 234 ms")
                .isTrue();
        clock().advanceMillis(3_087);
        Decision decision = limiter().check(user, 2, MINUTE);
        assertThat(decision.allowed())
                .as("[R1] the third check of a 2-limit window, at t = 5 321 ms, must be rejected")
                .isFalse();
        assertThat(decision.retryAfter())
                .as("[R1] retryAfter = oldest (1 000) + 60 000 - now (5 321)")
                .isEqualTo(Duration.ofMillis(55_679));
        assertThat(decision.resetAfter()).as("[R1] resetAfter on rejection").isEqualTo(decision.retryAfter());
    }

    @Test
    @DisplayName("R2 retryAfterSeconds rounds up to whole seconds, at least 1")
    default void retryAfterSecondsRoundsUp() {
        String user = user("r2");
        assertThat(limiter().check(user, 1, MINUTE).allowed())
                .as("[R2] the first check must be allowed")
                .isTrue();
        clock().advanceMillis(4_999);
        Decision decision = limiter().check(user, 1, MINUTE);
        assertThat(decision.retryAfter()).as("[R2] retryAfter").isEqualTo(Duration.ofMillis(55_001));
        assertThat(decision.retryAfterSeconds()).as("[R2] 55.001 s rounds up").isEqualTo(56);
        clock().set(START.plus(MINUTE).minusMillis(1));
        Decision last = limiter().check(user, 1, MINUTE);
        assertThat(last.retryAfter())
                .as("[R2] retryAfter 1 ms before the entry leaves")
                .isEqualTo(Duration.ofMillis(1));
        assertThat(last.retryAfterSeconds()).as("[R2] 1 ms rounds up to 1 s").isEqualTo(1);
    }

    @Test
    @DisplayName("R3 a retry after exactly retryAfter succeeds, one millisecond earlier it fails")
    default void retryAfterIsExact() {
        String user = user("r3");
        assertThat(allowedOf(4, user, 4, MINUTE))
                .as("[R3] the first 4 checks of a 4-limit window must be allowed")
                .isEqualTo(4);
        clock().advanceMillis(12_345);
        Decision rejected = limiter().check(user, 4, MINUTE);
        assertThat(rejected.allowed())
                .as("[R3] the fifth check must be rejected")
                .isFalse();
        clock().advance(rejected.retryAfter().minusMillis(1));
        assertThat(limiter().check(user, 4, MINUTE).allowed())
                .as("[R3] a retry 1 ms before retryAfter must be rejected")
                .isFalse();
        clock().advanceMillis(1);
        assertThat(limiter().check(user, 4, MINUTE).allowed())
                .as("[R3] a retry exactly at retryAfter must be allowed")
                .isTrue();
    }

    @Test
    @DisplayName("R4 an allowed decision's resetAfter is the time until its window's oldest entry leaves")
    default void resetAfterOnSuccess() {
        String user = user("r4");
        assertThat(limiter().check(user, 5, MINUTE).resetAfter())
                .as("[R4] the first entry leaves one window length after it was recorded")
                .isEqualTo(MINUTE);
        clock().advanceMillis(20_500);
        Decision second = limiter().check(user, 5, MINUTE);
        assertThat(second.resetAfter())
                .as("[R4] oldest entry at t0 leaves at t0 + 60 s; now is t0 + 20.5 s")
                .isEqualTo(Duration.ofMillis(39_500));
        assertThat(second.resetAfterSeconds())
                .as("[R4] resetAfterSeconds rounds 39.5 s up")
                .isEqualTo(40);
    }
}
