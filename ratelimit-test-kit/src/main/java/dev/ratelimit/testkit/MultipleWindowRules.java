package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.SharedBudget;
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
            assertThat(limiter().check(user, windows).allowed())
                    .as("[M1] check %d of 5/minute and 3/day must be allowed", i + 1)
                    .isTrue();
        }
        Decision first = limiter().check(user, windows);
        assertThat(first.allowed())
                .as("[M1] the fourth check must be rejected: the day window holds 3 of 3")
                .isFalse();
        assertThat(first.window()).as("[M1] the day window rejects").isEqualTo(THREE_PER_DAY);
        for (int i = 0; i < 3; i++) {
            // No window is asserted here: a store that charges the minute window on rejection fills it,
            // and the count below says why.
            assertThat(limiter().check(user, windows).allowed())
                    .as("[M1] check %d, past the day's limit, must be rejected", i + 5)
                    .isFalse();
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
        for (int i = 0; i < 2; i++) {
            assertThat(limiter().check(user, windows).allowed())
                    .as("[M2] check %d of 2/minute and 2/hour must be allowed", i + 1)
                    .isTrue();
        }
        Decision decision = limiter().check(user, windows);
        assertThat(decision.allowed())
                .as("[M2] the third check must be rejected: both windows are full")
                .isFalse();
        assertThat(decision.window().name())
                .as("[M2] the rejecting window is the shortest full one")
                .isEqualTo("minute");
        assertThat(decision.retryAfter())
                .as("[M2] the retry is the minute window's")
                .isEqualTo(MINUTE);
    }

    @Test
    @DisplayName("M3 a rejection by a longer window names it and gives its exact retry")
    default void longerWindowRejects() {
        String user = user("m3");
        List<Window> windows = List.of(FIVE_PER_MINUTE, THREE_PER_DAY);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, windows).allowed())
                    .as("[M3] check %d, at t0 + %d h, must be allowed", i + 1, i)
                    .isTrue();
            clock().advance(HOUR);
        }
        Decision decision = limiter().check(user, windows); // now = t0 + 3 h
        assertThat(decision.allowed())
                .as("[M3] the fourth check, at t0 + 3 h, must be rejected by the day window")
                .isFalse();
        assertThat(decision.window()).as("[M3] the rejecting window").isEqualTo(THREE_PER_DAY);
        assertThat(decision.limit())
                .as("[M3] the limit of the rejecting window")
                .isEqualTo(3);
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
        assertThat(first.window().name())
                .as("[M4] minute 2 left, hour 4 left: the least remaining")
                .isEqualTo("minute");
        assertThat(first.remaining()).as("[M4] the minute window's remaining").isEqualTo(2);
        clock().advance(MINUTE.plusSeconds(1));
        limiter().check(user, windows); // minute 2 left, hour 3 left
        clock().advance(MINUTE.plusSeconds(1));
        limiter().check(user, windows); // minute 2 left, hour 2 left: tie
        Decision tie = limiter().check(user, windows); // minute 1 left, hour 1 left: tie
        assertThat(tie.window().name())
                .as("[M4] minute 1 left, hour 1 left: ties go to the shortest window")
                .isEqualTo("minute");
        assertThat(tie.remaining()).as("[M4] remaining on a tie").isEqualTo(1);
        clock().advance(MINUTE.plusSeconds(1));
        Decision hour = limiter().check(user, windows); // minute 2 left, hour 0 left
        assertThat(hour.allowed())
                .as("[M4] the fifth check of 5/hour must be allowed")
                .isTrue();
        assertThat(hour.window().name())
                .as("[M4] minute 2 left, hour 0 left: the least remaining")
                .isEqualTo("hour");
        assertThat(hour.remaining()).as("[M4] the hour window's remaining").isZero();
    }

    @Test
    @DisplayName("M5 the order windows are given in does not matter")
    default void orderDoesNotMatter() {
        String user = user("m5");
        List<Window> reversed = List.of(THREE_PER_DAY, FIVE_PER_MINUTE);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, reversed).allowed())
                    .as("[M5] check %d of 3/day and 5/minute, given day first, must be allowed", i + 1)
                    .isTrue();
        }
        Decision decision = limiter().check(user, reversed);
        assertThat(decision.allowed())
                .as("[M5] given day first, the fourth check must be rejected: the day window holds 3 of 3")
                .isFalse();
        assertThat(decision.window())
                .as("[M5] given day first, the day window still rejects")
                .isEqualTo(THREE_PER_DAY);
        assertThat(allowedOf(5, user, 5, MINUTE))
                .as("[M5] given day first, the minute window holds exactly the 3 allowed requests: 2 slots"
                        + " left. A store that records in the minute window when the day window rejects leaves"
                        + " fewer")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("M6 a tier check applies the tier's windows")
    default void tierCheck() {
        String user = user("m6");
        Tier tier = new Tier("tiny", List.of(new Window("minute", 2, MINUTE), new Window("day", 10, DAY)));
        for (int i = 0; i < 2; i++) {
            assertThat(limiter().check(user, tier).allowed())
                    .as("[M6] check %d of a tier of 2/minute and 10/day must be allowed", i + 1)
                    .isTrue();
        }
        Decision decision = limiter().check(user, tier);
        assertThat(decision.allowed())
                .as("[M6] the third check must be rejected by the tier's minute window")
                .isFalse();
        assertThat(decision.window().name())
                .as("[M6] the rejecting window is the tier's")
                .isEqualTo("minute");
    }

    @Test
    @DisplayName(
            "M7 after a rejection, usage leaves out the later windows longer than the rejecting one: not evaluated")
    default void longerWindowsAfterRejectionAreNotEvaluated() {
        String user = user("m7");
        Window minute = new Window("minute", 2, MINUTE);
        Window hour = new Window("hour", 5, HOUR);
        Window day = new Window("day", 10, DAY);
        List<Window> requests = List.of(minute, hour, day);
        for (int i = 0; i < 2; i++) {
            assertThat(limiter().check(user, requests).allowed())
                    .as("[M7] check %d of 2/minute, 5/hour and 10/day must be allowed", i + 1)
                    .isTrue();
        }
        Decision byMinute = limiter().check(user, requests);
        assertThat(byMinute.window())
                .as("[M7] the minute window rejects the third check")
                .isEqualTo(minute);
        assertThat(byMinute.usage())
                .as("[M7] the minute window rejected: the hour and day windows are not evaluated, so absent")
                .extracting(Decision.Usage::window)
                .containsExactly(minute);
        assertThat(used(byMinute, minute, null))
                .as("[M7] the rejecting window's use")
                .isEqualTo(2);

        // A token window of the same length may be reported; longer windows of both scopes may not.
        String other = user("m7-tokens");
        Window tokens = Window.tokens("minute tokens", 1_000, MINUTE);
        Window dayTokens = Window.tokens("day tokens", 10_000, DAY);
        Tier tier = Tier.of("m7", minute, tokens, dayTokens);
        SharedBudget upstream = SharedBudget.of(user("m7-upstream"), Window.tokens(5_000, MINUTE), dayTokens);
        for (int i = 0; i < 2; i++) {
            assertThat(limiter()
                            .reserve(other, tier, 100, List.of(upstream))
                            .decision()
                            .allowed())
                    .as("[M7] reservation %d of 2/minute with tokens must be allowed", i + 1)
                    .isTrue();
        }
        Decision rejected =
                limiter().reserve(other, tier, 100, List.of(upstream)).decision();
        assertThat(rejected.window())
                .as("[M7] the minute window rejects the third reservation")
                .isEqualTo(minute);
        assertThat(rejected.usage())
                .as("[M7] no day window, the user's or the shared budget's, is reported after the minute rejected")
                .noneMatch(usage -> usage.window().length().compareTo(MINUTE) > 0);
        assertThat(used(rejected, minute, null))
                .as("[M7] the rejecting window's use")
                .isEqualTo(2);
    }
}
