package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section M: several windows, shortest first, all or nothing. */
interface MultipleWindowRules extends ConformanceSection {

    /** The shorter of the two windows most rules of this section check. */
    Window FIVE_PER_MINUTE = new Window("minute", 5, MINUTE);

    /** The longer one, which fills first. */
    Window THREE_PER_DAY = new Window("day", 3, DAY);

    @Test
    @DisplayName("M1 a rejection by a longer window records nothing in the shorter ones")
    default void allOrNothing() {
        String user = user("m1");
        List<Window> windows = List.of(FIVE_PER_MINUTE, THREE_PER_DAY);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, windows).allowed()).isTrue();
        }
        for (int i = 0; i < 4; i++) {
            Decision decision = limiter().check(user, windows);
            assertThat(decision.allowed()).isFalse();
            assertThat(decision.window()).as("[M1] the day window rejects").isEqualTo(THREE_PER_DAY);
        }
        assertThat(allowedOf(5, user, 5, MINUTE))
                .as("[M1] the minute window holds exactly the 3 allowed requests: 2 slots left. A store that"
                        + " records in the minute window when the day window rejects leaves fewer")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("M2 when several windows are full, the shortest rejects")
    default void shortestFirst() {
        String user = user("m2");
        List<Window> windows = List.of(new Window("minute", 2, MINUTE), new Window("hour", 2, HOUR));
        assertThat(limiter().check(user, windows).allowed()).isTrue();
        assertThat(limiter().check(user, windows).allowed()).isTrue();
        Decision decision = limiter().check(user, windows);
        assertThat(decision.allowed()).isFalse();
        assertThat(decision.window().name()).as("[M2] rejecting window").isEqualTo("minute");
        assertThat(decision.retryAfter())
                .as("[M2] retry from the minute window")
                .isEqualTo(MINUTE);
    }

    @Test
    @DisplayName("M3 a rejection by a longer window names it and gives its exact retry")
    default void longerWindowRejects() {
        String user = user("m3");
        List<Window> windows = List.of(FIVE_PER_MINUTE, THREE_PER_DAY);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, windows).allowed()).isTrue();
            clock().advance(HOUR);
        }
        Decision decision = limiter().check(user, windows); // now = t0 + 3 h
        assertThat(decision.allowed()).isFalse();
        assertThat(decision.window()).as("[M3] rejecting window").isEqualTo(THREE_PER_DAY);
        assertThat(decision.limit()).isEqualTo(3);
        assertThat(decision.retryAfter())
                .as("[M3] the day window's oldest entry (t0) leaves at t0 + 24 h")
                .isEqualTo(Duration.ofHours(21));
    }

    @Test
    @DisplayName("M4 an allowed decision names the window with the least remaining, ties to the shortest")
    default void decidingWindowOnSuccess() {
        String user = user("m4");
        List<Window> windows = List.of(new Window("minute", 3, MINUTE), new Window("hour", 5, HOUR));
        Decision first = limiter().check(user, windows); // minute 2 left, hour 4 left
        assertThat(first.window().name()).as("[M4] least remaining").isEqualTo("minute");
        assertThat(first.remaining()).isEqualTo(2);
        clock().advance(MINUTE.plusSeconds(1));
        limiter().check(user, windows); // minute 2 left, hour 3 left
        clock().advance(MINUTE.plusSeconds(1));
        limiter().check(user, windows); // minute 2 left, hour 2 left: tie
        Decision tie = limiter().check(user, windows); // minute 1 left, hour 1 left: tie
        assertThat(tie.window().name())
                .as("[M4] ties go to the shortest window")
                .isEqualTo("minute");
        assertThat(tie.remaining()).isEqualTo(1);
        clock().advance(MINUTE.plusSeconds(1));
        Decision hour = limiter().check(user, windows); // minute 2 left, hour 0 left
        assertThat(hour.window().name()).as("[M4] least remaining").isEqualTo("hour");
        assertThat(hour.remaining()).isZero();
        assertThat(hour.allowed()).isTrue();
    }

    @Test
    @DisplayName("M5 the order windows are given in does not matter")
    default void orderDoesNotMatter() {
        String user = user("m5");
        List<Window> reversed = List.of(THREE_PER_DAY, FIVE_PER_MINUTE);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, reversed).allowed()).isTrue();
        }
        Decision decision = limiter().check(user, reversed);
        assertThat(decision.allowed()).isFalse();
        assertThat(decision.window()).isEqualTo(THREE_PER_DAY);
        assertThat(allowedOf(5, user, 5, MINUTE)).as("[M5]").isEqualTo(2);
    }

    @Test
    @DisplayName("M6 a tier check applies the tier's windows")
    default void tierCheck() {
        String user = user("m6");
        Tier tier = new Tier("tiny", List.of(new Window("minute", 2, MINUTE), new Window("day", 10, DAY)));
        assertThat(limiter().check(user, tier).allowed()).isTrue();
        assertThat(limiter().check(user, tier).allowed()).isTrue();
        Decision decision = limiter().check(user, tier);
        assertThat(decision.allowed()).as("[M6]").isFalse();
        assertThat(decision.window().name()).isEqualTo("minute");
    }
}
