package dev.ratelimit.api;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.temporal.TemporalAdjusters;
import java.util.Locale;

/**
 * A calendar period a {@link Window} may be aligned to: a {@linkplain Window#calendar calendar window}
 * counts everything since the start of the current period in its time zone, and all of it leaves at
 * the start of the next.
 *
 * <p>Periods start at local midnight: of each day, of each Monday ({@link #WEEK}, ISO weeks), of the
 * 1st of each month, of the 1st of January. Their lengths follow the calendar and the zone's rules: a
 * day is 23 or 25 hours long across a daylight-saving change, a month 28 to 31 days. Where a zone
 * skips midnight (a few zones change their clocks at 00:00), the period starts at the first valid
 * local time of that day.
 */
public enum CalendarPeriod {

    /** From local midnight to the next. */
    DAY(Duration.ofDays(1)),

    /** From Monday's local midnight to the next Monday's. */
    WEEK(Duration.ofDays(7)),

    /** From the 1st of a month, local midnight, to the 1st of the next. */
    MONTH(Duration.ofDays(31)),

    /** From the 1st of January, local midnight, to the next 1st of January. */
    YEAR(Duration.ofDays(366));

    private final Duration nominalLength;

    CalendarPeriod(Duration nominalLength) {
        this.nominalLength = nominalLength;
    }

    /**
     * Returns the length a window aligned to this period declares: one day, seven days, 31 days or 366
     * days. It orders the window among the others of its scope and names its state in a store; the
     * periods themselves are as long as the calendar makes them.
     *
     * @return the nominal length
     */
    public Duration nominalLength() {
        return nominalLength;
    }

    /**
     * Returns the start of the period that holds {@code epochMillis} in {@code zone}.
     *
     * @param epochMillis a time in epoch milliseconds
     * @param zone the time zone whose calendar counts
     * @return the period's start in epoch milliseconds, at or before {@code epochMillis}
     * @throws NullPointerException if {@code zone} is {@code null}
     */
    public long startMillis(long epochMillis, ZoneId zone) {
        Checks.notNull(zone, "zone");
        return firstDay(Instant.ofEpochMilli(epochMillis).atZone(zone).toLocalDate())
                .atStartOfDay(zone)
                .toInstant()
                .toEpochMilli();
    }

    /**
     * Returns the start of the period after the one that holds {@code epochMillis} in {@code zone}:
     * when everything counted in the current period leaves.
     *
     * @param epochMillis a time in epoch milliseconds
     * @param zone the time zone whose calendar counts
     * @return the next period's start in epoch milliseconds, after {@code epochMillis}
     * @throws NullPointerException if {@code zone} is {@code null}
     */
    public long endMillis(long epochMillis, ZoneId zone) {
        Checks.notNull(zone, "zone");
        LocalDate first =
                firstDay(Instant.ofEpochMilli(epochMillis).atZone(zone).toLocalDate());
        LocalDate next = switch (this) {
            case DAY -> first.plusDays(1);
            case WEEK -> first.plusWeeks(1);
            case MONTH -> first.plusMonths(1);
            case YEAR -> first.plusYears(1);
        };
        return next.atStartOfDay(zone).toInstant().toEpochMilli();
    }

    private LocalDate firstDay(LocalDate date) {
        return switch (this) {
            case DAY -> date;
            case WEEK -> date.with(TemporalAdjusters.previousOrSame(DayOfWeek.MONDAY));
            case MONTH -> date.withDayOfMonth(1);
            case YEAR -> date.withDayOfYear(1);
        };
    }

    /**
     * Returns the period named by a word of configuration: {@code day}, {@code week}, {@code month} or
     * {@code year}, in any case.
     *
     * @param name the word
     * @return the period
     * @throws IllegalArgumentException naming the word when it is none of the four
     */
    public static CalendarPeriod of(String name) {
        Checks.notNull(name, "name");
        for (CalendarPeriod period : values()) {
            if (period.name().equalsIgnoreCase(name.trim())) {
                return period;
            }
        }
        throw new IllegalArgumentException("calendar period must be one of day, week, month, year, was '" + name + "'");
    }

    /**
     * Returns the period's configuration word.
     *
     * @return {@code day}, {@code week}, {@code month} or {@code year}
     */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
