package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.api.Window.Unit;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Section D: calendar windows. A window aligned to calendar periods counts everything recorded since
 * the current period's start in its time zone, and all of it leaves at the next period's start, to
 * the millisecond, whatever the month's length or a daylight-saving change; a reservation counts in
 * the period it was made in, however late it is settled.
 */
interface CalendarRules extends ConformanceSection {

    /** The zone of the rules that need one that is not UTC and changes its clocks. */
    ZoneId NEW_YORK = ZoneId.of("America/New_York");

    /** One dollar, in micro-dollars. */
    long DOLLAR = 1_000_000;

    /** The instant of a local time in New York. */
    static Instant newYork(int year, int month, int day, int hour, int minute, int second, int millis) {
        return LocalDateTime.of(year, month, day, hour, minute, second, millis * 1_000_000)
                .atZone(NEW_YORK)
                .toInstant();
    }

    /** Reserves {@code micros} of spend in {@code tier}. */
    default Decision spend(String user, Tier tier, long micros) {
        return limiter()
                .reserve(user, tier, Amounts.of(Unit.USD_MICROS, micros), List.of())
                .decision();
    }

    @Test
    @DisplayName("D1 a calendar month in America/New_York counts from local midnight of the 1st and all of it"
            + " leaves at local midnight of the next 1st, to the millisecond")
    default void monthBoundaryInNewYork() {
        Window month = Window.calendar("spend-month", 10 * DOLLAR, Unit.USD_MICROS, CalendarPeriod.MONTH, NEW_YORK);
        Tier tier = Tier.of("d1", month);
        String user = user("d1");
        clock().set(newYork(2024, 12, 31, 23, 59, 59, 999));
        assertThat(spend(user, tier, 10 * DOLLAR).allowed())
                .as("[D1] $10 in the last millisecond of December, New York time")
                .isTrue();
        Decision full = spend(user, tier, 1);
        assertThat(full.allowed()).as("[D1] December is used up").isFalse();
        assertThat(full.retryAfter())
                .as("[D1] the retry points at local midnight of January 1st: 1 ms away")
                .isEqualTo(Duration.ofMillis(1));
        clock().set(newYork(2025, 1, 1, 0, 0, 0, 0));
        Decision first = spend(user, tier, 6 * DOLLAR);
        assertThat(first.allowed())
                .as("[D1] at local midnight of January 1st December's $10 has left")
                .isTrue();
        assertThat(used(first, month, null)).as("[D1] January holds $6").isEqualTo(6 * DOLLAR);
        assertThat(first.resetAfter())
                .as("[D1] what January holds leaves at local midnight of February 1st, 31 days away")
                .isEqualTo(Duration.ofDays(31));
        clock().set(Instant.parse("2025-02-01T00:00:00Z")); // 19:00 on January 31st in New York
        Decision rest = spend(user, tier, 4 * DOLLAR);
        assertThat(rest.allowed())
                .as("[D1] midnight in UTC is no boundary of a New York month: $4 more fits")
                .isTrue();
        assertThat(used(rest, month, null))
                .as("[D1] the $6 of January's first millisecond still counts")
                .isEqualTo(10 * DOLLAR);
        clock().set(newYork(2025, 1, 31, 23, 59, 59, 999));
        Decision last = spend(user, tier, 1);
        assertThat(last.allowed())
                .as("[D1] in January's last millisecond, New York time, January is still full")
                .isFalse();
        assertThat(last.window()).as("[D1] the month rejects").isEqualTo(month);
        assertThat(last.retryAfter())
                .as("[D1] the retry points at local midnight of February 1st")
                .isEqualTo(Duration.ofMillis(1));
        clock().set(newYork(2025, 2, 1, 0, 0, 0, 0));
        Decision february = spend(user, tier, 10 * DOLLAR);
        assertThat(february.allowed())
                .as("[D1] at local midnight of February 1st the whole budget is back")
                .isTrue();
        assertThat(used(february, month, null)).as("[D1] February holds $10").isEqualTo(10 * DOLLAR);
        assertThat(february.resetAfter())
                .as("[D1] February (28 days in 2025) ends at local midnight of March 1st")
                .isEqualTo(Duration.ofDays(28));
    }

    @Test
    @DisplayName("D2 a calendar day across a daylight-saving change lasts 23 or 25 hours in its zone, and"
            + " retries point at its local midnight")
    default void dayAcrossDaylightSaving() {
        Window day = Window.calendar("day", 3, Unit.REQUESTS, CalendarPeriod.DAY, NEW_YORK);
        String user = user("d2");
        clock().set(newYork(2025, 3, 9, 0, 0, 0, 0)); // clocks spring forward at 2:00 that day
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, List.of(day)).allowed())
                    .as("[D2] request %d of 3 on March 9th", i + 1)
                    .isTrue();
        }
        Decision full = limiter().check(user, List.of(day));
        assertThat(full.allowed()).as("[D2] March 9th is used up").isFalse();
        assertThat(full.retryAfter())
                .as("[D2] March 9th in New York lasts 23 hours")
                .isEqualTo(Duration.ofHours(23));
        clock().set(newYork(2025, 3, 9, 23, 59, 59, 999));
        assertThat(limiter().check(user, List.of(day)).allowed())
                .as("[D2] still full in the day's last millisecond")
                .isFalse();
        clock().set(newYork(2025, 3, 10, 0, 0, 0, 0));
        assertThat(limiter().check(user, List.of(day)).allowed())
                .as("[D2] room again at local midnight of March 10th")
                .isTrue();
        String autumn = user("d2-autumn");
        clock().set(newYork(2025, 11, 2, 0, 0, 0, 0)); // clocks fall back at 2:00 that day
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(autumn, List.of(day)).allowed())
                    .as("[D2] request %d of 3 on November 2nd", i + 1)
                    .isTrue();
        }
        Decision autumnFull = limiter().check(autumn, List.of(day));
        assertThat(autumnFull.retryAfter())
                .as("[D2] November 2nd in New York lasts 25 hours")
                .isEqualTo(Duration.ofHours(25));
        clock().set(newYork(2025, 11, 2, 23, 59, 59, 999));
        assertThat(limiter().check(autumn, List.of(day)).allowed())
                .as("[D2] still full in the long day's last millisecond")
                .isFalse();
        clock().set(newYork(2025, 11, 3, 0, 0, 0, 0));
        assertThat(limiter().check(autumn, List.of(day)).allowed())
                .as("[D2] room again at local midnight of November 3rd")
                .isTrue();
    }

    @Test
    @DisplayName("D3 a calendar week starts at Monday's midnight and a year at January 1st's (UTC by default)")
    default void weekFromMondayAndYear() {
        Window year = Window.calendar("tokens-year", 1_000, Unit.TOKENS, CalendarPeriod.YEAR);
        Tier yearly = Tier.of("d3", year);
        String tenant = user("d3-year");
        clock().set(Instant.parse("2024-01-01T00:00:00Z"));
        assertThat(limiter()
                        .reserve(tenant, yearly, 1_000, List.of())
                        .decision()
                        .allowed())
                .as("[D3] 1,000 tokens on January 1st, 2024")
                .isTrue();
        clock().set(Instant.parse("2024-12-31T23:59:59.999Z"));
        Decision late = limiter().reserve(tenant, yearly, 1, List.of()).decision();
        assertThat(late.allowed()).as("[D3] still used up on December 31st").isFalse();
        assertThat(late.retryAfter()).as("[D3] until 2025 begins").isEqualTo(Duration.ofMillis(1));
        clock().set(Instant.parse("2025-01-01T00:00:00Z"));
        assertThat(limiter()
                        .reserve(tenant, yearly, 1_000, List.of())
                        .decision()
                        .allowed())
                .as("[D3] 2024 (366 days) has left at midnight of January 1st, 2025")
                .isTrue();

        Window week = Window.calendar("week", 2, Unit.REQUESTS, CalendarPeriod.WEEK);
        String user = user("d3");
        clock().set(Instant.parse("2025-01-05T23:59:59.999Z")); // a Sunday
        assertThat(allowedOfWindow(3, user, week))
                .as("[D3] 2 of 3 pass on Sunday")
                .isEqualTo(2);
        assertThat(limiter().check(user, List.of(week)).retryAfter())
                .as("[D3] the week ends at Monday's midnight, UTC: 1 ms away")
                .isEqualTo(Duration.ofMillis(1));
        clock().set(Instant.parse("2025-01-06T00:00:00Z"));
        assertThat(allowedOfWindow(3, user, week))
                .as("[D3] the week starting Monday has the whole budget")
                .isEqualTo(2);
        assertThat(limiter().check(user, List.of(week)).retryAfter())
                .as("[D3] and lasts 7 days")
                .isEqualTo(Duration.ofDays(7));
    }

    @Test
    @DisplayName("D4 a reservation made before midnight and settled after it counts in the period it was made"
            + " in: its refund or overrun never reaches the new period, and it leaves at the new period's start")
    default void settledAcrossMidnight() {
        Window day = Window.calendar("tokens-day", 1_000, Unit.TOKENS, CalendarPeriod.DAY, NEW_YORK);
        Tier tier = Tier.of("d4", day);
        // the clock only moves forward: a store may drop state on the latest time it has seen
        String same = user("d4-same-day");
        clock().set(newYork(2025, 1, 30, 23, 0, 0, 0));
        Reservation within = limiter().reserve(same, tier, 600, List.of());
        assertThat(within.decision().allowed()).as("[D4] 600 tokens at 23:00").isTrue();
        clock().set(newYork(2025, 1, 30, 23, 30, 0, 0));
        settled(within.commit(900));
        Decision full = limiter().reserve(same, tier, 101, List.of()).decision();
        assertThat(full.allowed())
                .as("[D4] an overrun settled before midnight counts in that day: 900 used, 101 more do not fit")
                .isFalse();
        assertThat(full.retryAfter())
                .as("[D4] the retry points at local midnight")
                .isEqualTo(Duration.ofMinutes(30));
        clock().set(newYork(2025, 1, 31, 0, 0, 0, 0));
        assertThat(limiter().reserve(same, tier, 1_000, List.of()).decision().allowed())
                .as("[D4] the reservation and its overrun leave at local midnight")
                .isTrue();

        String overrun = user("d4-overrun");
        clock().set(newYork(2025, 1, 31, 23, 59, 0, 0));
        Reservation late = limiter().reserve(overrun, tier, 800, List.of());
        assertThat(late.decision().allowed()).as("[D4] 800 tokens at 23:59").isTrue();
        clock().set(newYork(2025, 2, 1, 0, 0, 30, 0));
        settled(late.commit(1_000));
        Decision fresh = limiter().reserve(overrun, tier, 1_000, List.of()).decision();
        assertThat(fresh.allowed())
                .as("[D4] an overrun of 200 settled after midnight is not charged to the new day")
                .isTrue();
        assertThat(used(fresh, day, null))
                .as("[D4] the new day holds only its own")
                .isEqualTo(1_000);

        String refund = user("d4-refund");
        clock().set(newYork(2025, 2, 1, 23, 59, 0, 0));
        Reservation early = limiter().reserve(refund, tier, 800, List.of());
        assertThat(early.decision().allowed()).as("[D4] 800 tokens at 23:59").isTrue();
        clock().set(newYork(2025, 2, 2, 0, 0, 30, 0));
        settled(early.commit(300));
        Decision after = limiter().reserve(refund, tier, 1_000, List.of()).decision();
        assertThat(after.allowed()).as("[D4] the new day starts empty").isTrue();
        assertThat(used(after, day, null))
                .as("[D4] a refund settled after midnight gives nothing extra to the new day")
                .isEqualTo(1_000);
    }

    @Test
    @DisplayName("D5 a calendar window and a sliding window of the same unit and length keep separate logs")
    default void calendarBesideSliding() {
        Window sliding = Window.of(5, DAY);
        Window calendar = Window.calendar("calendar-day", 3, Unit.REQUESTS, CalendarPeriod.DAY);
        List<Window> both = List.of(calendar, sliding);
        String user = user("d5");
        clock().set(Instant.parse("2025-01-01T23:00:00Z"));
        for (int i = 0; i < 3; i++) {
            assertThat(limiter().check(user, both).allowed())
                    .as("[D5] request %d of 3 at 23:00", i + 1)
                    .isTrue();
        }
        Decision byCalendar = limiter().check(user, both);
        assertThat(byCalendar.window()).as("[D5] the calendar day rejects").isEqualTo(calendar);
        assertThat(byCalendar.retryAfter()).as("[D5] until midnight").isEqualTo(HOUR);
        clock().set(Instant.parse("2025-01-02T00:00:00Z"));
        assertThat(limiter().check(user, both).allowed())
                .as("[D5] 4th of the sliding day")
                .isTrue();
        assertThat(limiter().check(user, both).allowed())
                .as("[D5] 5th of the sliding day")
                .isTrue();
        Decision bySliding = limiter().check(user, both);
        assertThat(bySliding.allowed()).as("[D5] the sliding day is full").isFalse();
        assertThat(bySliding.window()).as("[D5] the sliding day rejects").isEqualTo(sliding);
        assertThat(bySliding.retryAfter())
                .as("[D5] when the first entry leaves the sliding day")
                .isEqualTo(Duration.ofHours(23));
    }

    /** Counts the checks of {@code window} alone that pass out of {@code attempts}. */
    default int allowedOfWindow(int attempts, String user, Window window) {
        int allowed = 0;
        for (int i = 0; i < attempts; i++) {
            if (limiter().check(user, List.of(window)).allowed()) {
                allowed++;
            }
        }
        return allowed;
    }
}
