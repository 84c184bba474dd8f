package dev.ratelimit.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class CalendarWindowTest {

    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    private static long millis(String instant) {
        return Instant.parse(instant).toEpochMilli();
    }

    @Test
    @DisplayName("periods start at local midnight: of the day, of Monday, of the 1st, of January 1st")
    void periodBounds() {
        long t = millis("2025-03-09T12:00:00Z"); // a Sunday, 08:00 in New York, the day clocks spring forward
        assertThat(CalendarPeriod.DAY.startMillis(t, NEW_YORK)).isEqualTo(millis("2025-03-09T05:00:00Z"));
        assertThat(CalendarPeriod.DAY.endMillis(t, NEW_YORK)).isEqualTo(millis("2025-03-10T04:00:00Z"));
        assertThat(CalendarPeriod.WEEK.startMillis(t, NEW_YORK)).isEqualTo(millis("2025-03-03T05:00:00Z"));
        assertThat(CalendarPeriod.WEEK.endMillis(t, NEW_YORK)).isEqualTo(millis("2025-03-10T04:00:00Z"));
        assertThat(CalendarPeriod.MONTH.startMillis(t, NEW_YORK)).isEqualTo(millis("2025-03-01T05:00:00Z"));
        assertThat(CalendarPeriod.MONTH.endMillis(t, NEW_YORK)).isEqualTo(millis("2025-04-01T04:00:00Z"));
        assertThat(CalendarPeriod.YEAR.startMillis(t, ZoneOffset.UTC)).isEqualTo(millis("2025-01-01T00:00:00Z"));
        assertThat(CalendarPeriod.YEAR.endMillis(t, ZoneOffset.UTC)).isEqualTo(millis("2026-01-01T00:00:00Z"));
        long midnight = millis("2025-03-10T04:00:00Z");
        assertThat(CalendarPeriod.DAY.startMillis(midnight, NEW_YORK))
                .as("a period's start belongs to it")
                .isEqualTo(midnight);
    }

    @Test
    @DisplayName("Window.calendar builds an exact window of the period's nominal length; bad input names the argument")
    void calendarWindow() {
        Window month = Window.calendar("spend-month", 500_000_000, Window.Unit.USD_MICROS, CalendarPeriod.MONTH);
        assertThat(month.isCalendar()).isTrue();
        assertThat(month.calendar()).isEqualTo(new Window.Calendar(CalendarPeriod.MONTH, ZoneOffset.UTC));
        assertThat(month.length()).isEqualTo(Duration.ofDays(31));
        assertThat(month.isExact()).isTrue();
        assertThat(Window.of(5, Duration.ofDays(1)).isCalendar()).isFalse();
        assertThatThrownBy(() -> month.withPrecision(Duration.ofHours(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("precision must be zero in a calendar window");
        assertThatThrownBy(() -> new Window(
                        "x",
                        1,
                        Duration.ofDays(30),
                        Window.Unit.REQUESTS,
                        Duration.ZERO,
                        null,
                        new Window.Calendar(CalendarPeriod.MONTH, NEW_YORK)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("length of a calendar month window must be PT744H");
        assertThatThrownBy(() -> Window.calendar("x", 1, Window.Unit.REQUESTS, CalendarPeriod.DAY, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("zone must not be null");
        assertThatThrownBy(() -> CalendarPeriod.of("fortnight"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'fortnight'");
    }

    @Test
    @DisplayName("a tier may hold a calendar day beside a sliding day of the same unit, not two calendar days")
    void tierKeepsCalendarApart() {
        Window sliding = Window.tokens(1_000, Duration.ofDays(1));
        Window calendar = Window.calendar("tokens-calendar-day", 1_000, Window.Unit.TOKENS, CalendarPeriod.DAY);
        assertThat(Tier.of("t", sliding, calendar).windows()).hasSize(2);
        Window other = Window.calendar("tokens-ny-day", 1_000, Window.Unit.TOKENS, CalendarPeriod.DAY, NEW_YORK);
        assertThatThrownBy(() -> Tier.of("t", calendar, other))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("found a calendar day twice");
    }

    @Test
    @DisplayName(
            "tier files: /month and /year are calendar periods, /day and /week are with @calendar, in UTC or a zone")
    void tierFileSyntax() {
        Window month = TierPolicy.parseWindow("spend-month", "$500/month");
        assertThat(month.calendar()).isEqualTo(new Window.Calendar(CalendarPeriod.MONTH, ZoneOffset.UTC));
        assertThat(month.limit()).isEqualTo(500_000_000L);
        assertThat(month.unit()).isEqualTo(Window.Unit.USD_MICROS);
        Window day = TierPolicy.parseWindow("tokens-day", "1000000 tokens/day@calendar");
        assertThat(day.calendar()).isEqualTo(new Window.Calendar(CalendarPeriod.DAY, ZoneOffset.UTC));
        Window local = TierPolicy.parseWindow("spend-month", "$500/month@calendar(America/New_York) fail-closed");
        assertThat(local.calendar()).isEqualTo(new Window.Calendar(CalendarPeriod.MONTH, NEW_YORK));
        assertThat(local.failurePolicy()).isEqualTo(FailurePolicy.CLOSED);
        Window slidingDay = TierPolicy.parseWindow("day", "100/day");
        assertThat(slidingDay.isCalendar()).isFalse();
        assertThat(slidingDay.length()).isEqualTo(Duration.ofDays(1));
        assertThatThrownBy(() -> TierPolicy.parseWindow("w", "5/30d@calendar"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a length of day, week, month or year");
        assertThatThrownBy(() -> TierPolicy.parseWindow("w", "$5/month@1h"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("takes no precision step");
        assertThatThrownBy(() -> TierPolicy.parseWindow("w", "$5/month@calendar(Mars/Olympus)"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("time zone 'Mars/Olympus' is not known");
    }
}
