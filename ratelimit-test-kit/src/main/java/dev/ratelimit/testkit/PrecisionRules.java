package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Section P: precision windows. Entries within one precision step count as one entry recorded at the
 * end of the step: the window never admits more than its limit in any span of its length, gives
 * capacity back at most one step late, and keeps state whose size does not grow with traffic.
 */
interface PrecisionRules extends ConformanceSection {

    Duration STEP = Duration.ofSeconds(10);

    /** 10 requests per minute in steps of 10 s. */
    Window COARSE = Window.of(10, MINUTE).withPrecision(STEP);

    @Test
    @DisplayName("P1 a precision window never admits more than its limit in any span of its length")
    default void neverOverAdmits() {
        String user = user("p1");
        List<Long> admitted = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            if (limiter().check(user, List.of(COARSE)).allowed()) {
                admitted.add(clock().millis());
            }
            clock().advanceMillis(3_700);
        }
        for (long at : admitted) {
            long inSpan = admitted.stream()
                    .filter(other -> other > at - MINUTE.toMillis() && other <= at)
                    .count();
            assertThat(inSpan)
                    .as("[P1] admitted in the minute ending at +%d ms", at - START.toEpochMilli())
                    .isLessThanOrEqualTo(10);
        }
        assertThat(admitted.size())
                .as("[P1] it does admit: 120 checks over 444 s")
                .isGreaterThan(50);
    }

    @Test
    @DisplayName("P2 capacity returns at the end of the entry's step plus the length: at most one step late")
    default void atMostOneStepLate() {
        String user = user("p2");
        clock().advance(Duration.ofSeconds(3));
        for (int i = 0; i < 10; i++) {
            assertThat(limiter().check(user, List.of(COARSE)).allowed())
                    .as("[P2] check %d at +3 s", i + 1)
                    .isTrue();
        }
        Decision rejected = limiter().check(user, List.of(COARSE));
        assertThat(rejected.allowed()).as("[P2] the 11th").isFalse();
        assertThat(rejected.retryAfter())
                .as("[P2] entries of the step [0 s, 10 s) count as recorded at 10 s and leave at 70 s: 67 s from +3 s"
                        + " (an exact window: 60 s; late by 7 s, under one step)")
                .isEqualTo(Duration.ofSeconds(67));
        clock().advance(Duration.ofSeconds(67).minusMillis(1));
        assertThat(limiter().check(user, List.of(COARSE)).allowed())
                .as("[P2] one millisecond before")
                .isFalse();
        clock().advanceMillis(1);
        assertThat(limiter().check(user, List.of(COARSE)).allowed())
                .as("[P2] at the end of the step plus the length")
                .isTrue();
    }

    @Test
    @DisplayName("P3 a precision window settles in the reservation's step")
    default void settlesInItsStep() {
        String user = user("p3");
        Window tokens = Window.tokens(1_000, MINUTE).withPrecision(STEP);
        Tier tier = Tier.of("p3", tokens);
        clock().advance(Duration.ofSeconds(1));
        Reservation first = limiter().reserve(user, tier, 600);
        clock().advance(Duration.ofSeconds(14));
        Reservation second = limiter().reserve(user, tier, 300);
        assertThat(second.decision().allowed()).as("[P3] 600 + 300").isTrue();
        settled(first.commit(100));
        Decision fits = limiter().reserve(user, tier, 600).decision();
        assertThat(fits.allowed()).as("[P3] 100 + 300 + 600 after the refund").isTrue();
        assertThat(used(fits, tokens, null)).as("[P3] tokens counted").isEqualTo(1_000);
        Decision rejected = limiter().reserve(user, tier, 200).decision();
        assertThat(rejected.retryAfter())
                .as("[P3] 200 must leave: the first step (100, ends at 10 s) is not enough, the second (900, ends at"
                        + " 20 s) is: it leaves at 80 s, 65 s from +15 s")
                .isEqualTo(Duration.ofSeconds(65));
    }

    @Test
    @DisplayName("P4 a precision window keeps the same state whether a step holds 2 requests or 500")
    default void stateStaysFlat() {
        assumeTrue(kit().supportsStateSize(), "[P4] the store does not report its state size");
        Window window = Window.of(10_000, MINUTE).withPrecision(STEP);
        String calm = user("p4-calm");
        String busy = user("p4-busy");
        for (int step = 0; step < 6; step++) {
            for (int i = 0; i < 2; i++) {
                limiter().check(calm, List.of(window));
            }
            for (int i = 0; i < 500; i++) {
                limiter().check(busy, List.of(window));
            }
            clock().advance(STEP);
        }
        long calmSize = kit().stateSize(store(), calm, window);
        long busySize = kit().stateSize(store(), busy, window);
        assertThat(calmSize).as("[P4] state of a user with 2 requests per step").isPositive();
        assertThat(busySize)
                .as("[P4] state of a user with 500 requests per step, against %d for 2 per step", calmSize)
                .isEqualTo(calmSize);
    }

    @Test
    @DisplayName("P5 a request a later, longer window rejects costs the precision windows before it nothing")
    default void laterRejectionCostsNothing() {
        Window hour = Window.tokens(10_000, HOUR).withPrecision(MINUTE);
        Window day = Window.of(2, DAY);
        Tier both = Tier.of("p5", hour, day);
        String user = user("p5");
        for (int i = 0; i < 2; i++) {
            assertThat(limiter().reserve(user, both, 400, List.of()).decision().allowed())
                    .as("[P5] request %d: 400 tokens of the hour, one of the day's 2 requests", i + 1)
                    .isTrue();
        }
        Decision rejected = limiter().reserve(user, both, 400, List.of()).decision();
        assertThat(rejected.allowed())
                .as("[P5] the day's 2 requests are used up")
                .isFalse();
        assertThat(rejected.window()).as("[P5] rejected by the day").isEqualTo(day);
        assertThat(used(rejected, hour, null))
                .as("[P5] the rejection reports the hour's tokens without its 400")
                .isEqualTo(800);
        Tier hourOnly = Tier.of("p5-hour", hour);
        assertThat(limiter()
                        .reserve(user, hourOnly, 9_200, List.of())
                        .decision()
                        .allowed())
                .as("[P5] the hour holds 800 tokens, not 1,200: 9,200 more fit its 10,000 exactly")
                .isTrue();
        assertThat(limiter().reserve(user, hourOnly, 1, List.of()).decision().allowed())
                .as("[P5] and not one more")
                .isFalse();
    }
}
