package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section S: the window slides; there is no fixed boundary. */
interface SlidingWindowRules extends ConformanceSection {

    @Test
    @DisplayName("S1 a burst straddling a fixed-window boundary is not let through twice")
    default void straddlingBurst() {
        String user = user("s1");
        clock().set(START.plusSeconds(59));
        assertThat(allowedOf(5, user, 5, MINUTE))
                .as("[S1] a burst of 5 at 0:59 on a 5-per-minute window must be allowed")
                .isEqualTo(5);
        clock().set(START.plusSeconds(61)); // past the minute boundary a fixed window resets at
        assertThat(allowedOf(5, user, 5, MINUTE))
                .as("[S1] 2 s after a full burst, across a minute boundary, nothing more may pass")
                .isZero();
        clock().set(START.plusSeconds(119));
        assertThat(allowedOf(6, user, 5, MINUTE))
                .as("[S1] one window after the burst, the whole budget is back")
                .isEqualTo(5);
    }

    @Test
    @DisplayName("S2 an entry leaves exactly one window length after it was recorded")
    default void entryLeavesAfterExactlyOneWindow() {
        String user = user("s2");
        assertThat(limiter().check(user, 1, MINUTE).allowed())
                .as("[S2] the first check must be allowed")
                .isTrue();
        clock().advance(MINUTE.minusMillis(1));
        assertThat(limiter().check(user, 1, MINUTE).allowed())
                .as("[S2] 1 ms before the entry leaves, the window is still full")
                .isFalse();
        clock().advanceMillis(1);
        assertThat(limiter().check(user, 1, MINUTE).allowed())
                .as("[S2] exactly one window length later the entry has left")
                .isTrue();
    }

    @Test
    @DisplayName("S3 the budget returns entry by entry as old entries leave")
    default void budgetReturnsEntryByEntry() {
        String user = user("s3");
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, 3, MINUTE).allowed())
                    .as("[S3] check %d of 3, at t0 + %d s", i + 1, 10 * i)
                    .isTrue();
            clock().advance(Duration.ofSeconds(10));
        }
        clock().set(START.plus(MINUTE));
        assertThat(allowedOf(2, user, 3, MINUTE))
                .as("[S3] when the first entry leaves, one slot opens")
                .isEqualTo(1);
        clock().set(START.plus(MINUTE).plusSeconds(10));
        assertThat(allowedOf(2, user, 3, MINUTE))
                .as("[S3] when the second entry leaves, one more slot opens")
                .isEqualTo(1);
    }
}
