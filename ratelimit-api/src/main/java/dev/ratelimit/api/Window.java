package dev.ratelimit.api;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.jspecify.annotations.Nullable;

/**
 * One limit: at most {@code limit} requests, or {@code limit} of another {@link Unit} such as
 * tokens or micro-dollars, within any {@code length}-long span of time ending now.
 *
 * <p>A request window counts each admitted request once; a window of any other unit counts the
 * amount of that unit a reservation declares (then settles to what was used), so a tier can hold a
 * GenAI tenant's requests, tokens and spend per minute, per day and per month side by side.
 *
 * <p>A window is exact by default: every entry leaves it exactly {@code length} after it was
 * recorded. {@link #withPrecision(Duration)} trades that for bounded memory: entries within one
 * precision step are kept as one, recorded as if at the end of the step, so the window never admits
 * more than its limit and gives capacity back at most one step late.
 *
 * <p>A {@linkplain #calendar calendar window} is aligned to calendar periods instead (a day, a week
 * starting Monday, a month, a year, in a time zone): it counts everything recorded since the current
 * period started, and all of it leaves at the next period's start, where retries point. Like any
 * fixed window it lets up to twice its limit through around a boundary (the limit just before the
 * period ends, the limit again just after); choose it when the budget is an accounting one ("$500 a
 * month", reset on the 1st), and a sliding window when the point is to cap the rate over any span.
 *
 * <p>A window in {@linkplain Mode#SHADOW shadow mode} ({@link #inShadow()}) is counted exactly as if
 * it were enforced, apart from the windows that are, and never refuses: a request it would refuse
 * is admitted and named in {@link Decision#shadowRefusals()}, and it is not recorded in that window
 * (as an enforced window records nothing it refuses), so the window's count stays what it would be
 * if it were enforced. Run a new limit in shadow first to see whom it would stop.
 *
 * @param name a short label used in headers, metrics and messages (for example {@code "minute"})
 * @param limit the amount of the window's unit allowed within the window, at least 1 (up to {@code
 *     Long.MAX_VALUE}; stores keep sums exact up to 2<sup>53</sup>)
 * @param length the window length: a whole number of seconds, at least one second
 * @param unit what the window counts
 * @param precision {@link Duration#ZERO} for an exact window, otherwise the step entries are
 *     grouped by: a whole number of seconds, shorter than {@code length}, at most {@value
 *     #MAX_STEPS} steps per window
 * @param failurePolicy what the window does while the store cannot decide, or {@code null} to follow
 *     the limiter's choice for its unit (see {@link FailurePolicy})
 * @param calendar the calendar period and zone the window is aligned to, or {@code null} for a
 *     sliding window; a calendar window is exact ({@code precision} zero) and its {@code length} is
 *     its period's {@linkplain CalendarPeriod#nominalLength() nominal length}
 * @param mode {@link Mode#ENFORCE} (the default) or {@link Mode#SHADOW}: counted, never refusing
 */
public record Window(
        String name,
        long limit,
        Duration length,
        Unit unit,
        Duration precision,
        @Nullable FailurePolicy failurePolicy,
        @Nullable Calendar calendar,
        Mode mode) {

    /** The most precision steps a window may be divided into; bounds its memory. */
    public static final int MAX_STEPS = 100_000;

    /**
     * What a window counts: {@link #REQUESTS} (each admitted request counts 1), or a named unit whose
     * amount each reservation declares in its {@link Amounts}, such as {@link #TOKENS} or {@code
     * usd_micros}.
     *
     * <p>Two units are the same when their names are; units order requests first, then tokens, then
     * the others by name (the order windows of one length are evaluated in).
     *
     * @param name the unit's name: 1 to 64 characters of {@code a-z}, {@code 0-9} and {@code _},
     *     starting with a letter
     */
    public record Unit(String name) implements Comparable<Unit> {

        // before the constants: their construction checks their names against it
        private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[a-z][a-z0-9_]{0,63}");

        /** Each admitted request counts 1. */
        public static final Unit REQUESTS = new Unit("requests");

        /** Each admitted request counts the tokens it reserved, settled to the tokens it used. */
        public static final Unit TOKENS = new Unit("tokens");

        /**
         * Millionths of a US dollar: spend windows count the cost a reservation declares, settled to
         * the cost of what was used ({@code $1} is 1,000,000).
         */
        public static final Unit USD_MICROS = new Unit("usd_micros");

        /**
         * Validates the name.
         *
         * @param name the unit's name: 1 to 64 characters of {@code a-z}, {@code 0-9} and {@code _},
         *     starting with a letter
         * @throws NullPointerException if {@code name} is {@code null}
         * @throws IllegalArgumentException if {@code name} is not 1 to 64 characters of {@code
         *     a-z0-9_} starting with a letter
         */
        public Unit {
            Checks.notNull(name, "name");
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException(
                        "name must be 1 to 64 characters of a-z, 0-9 and _, starting with a letter, was '" + name
                                + "'");
            }
        }

        /**
         * Returns the unit of this name: {@link #REQUESTS} and {@link #TOKENS} for theirs.
         *
         * @param name the unit's name, for example {@code "usd_micros"}
         * @return the unit
         * @throws IllegalArgumentException if the name is not a valid unit name
         */
        public static Unit of(String name) {
            if (REQUESTS.name.equals(name)) {
                return REQUESTS;
            } else if (TOKENS.name.equals(name)) {
                return TOKENS;
            } else if (USD_MICROS.name.equals(name)) {
                return USD_MICROS;
            }
            return new Unit(name);
        }

        /**
         * Tells whether this unit counts requests, one per admitted request.
         *
         * @return {@code true} for {@link #REQUESTS}
         */
        public boolean isRequests() {
            return equals(REQUESTS);
        }

        @Override
        public int compareTo(Unit other) {
            int rank = Integer.compare(rank(), other.rank());
            return rank != 0 ? rank : name.compareTo(other.name);
        }

        private int rank() {
            return isRequests() ? 0 : equals(TOKENS) ? 1 : 2;
        }

        /**
         * Tells whether {@code other} is a unit of the same name; written out, the same as the
         * record's own, because units are compared on every request's path and the generated one
         * goes through a method handle.
         */
        @Override
        public boolean equals(@Nullable Object other) {
            return this == other || (other instanceof Unit unit && name.equals(unit.name));
        }

        /** The name's hash: the value the record's own would give. */
        @Override
        public int hashCode() {
            return name.hashCode();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** Whether a window refuses what does not fit, or only reports what it would have refused. */
    public enum Mode {
        /** The window refuses a request that does not fit: the default. */
        ENFORCE,
        /**
         * The window is counted as if enforced but never refuses: a request it would refuse is
         * admitted, named in {@link Decision#shadowRefusals()}, and not recorded in it.
         */
        SHADOW
    }

    /**
     * The calendar a window is aligned to: its periods and the time zone whose midnights start them.
     *
     * @param period the period: day, week (from Monday), month or year
     * @param zone the time zone, such as {@code America/New_York}; {@link ZoneOffset#UTC} by default
     */
    public record Calendar(CalendarPeriod period, ZoneId zone) {

        /**
         * Validates the components.
         *
         * @param period the period: day, week (from Monday), month or year
         * @param zone the time zone, such as {@code America/New_York}; {@link ZoneOffset#UTC} by default
         * @throws NullPointerException if an argument is {@code null}
         */
        public Calendar {
            Checks.notNull(period, "period");
            Checks.notNull(zone, "zone");
        }

        /**
         * Returns the start of the period that holds {@code epochMillis}.
         *
         * @param epochMillis a time in epoch milliseconds
         * @return the period's start in epoch milliseconds
         */
        public long startMillis(long epochMillis) {
            return period.startMillis(epochMillis, zone);
        }

        /**
         * Returns the start of the next period: when what the period holding {@code epochMillis}
         * counted leaves.
         *
         * @param epochMillis a time in epoch milliseconds
         * @return the next period's start in epoch milliseconds
         */
        public long endMillis(long epochMillis) {
            return period.endMillis(epochMillis, zone);
        }

        @Override
        public String toString() {
            return period + "@" + zone.getId();
        }
    }

    /**
     * Validates the components.
     *
     * @param name a short label used in headers, metrics and messages (for example {@code "minute"})
     * @param limit the amount of the window's unit allowed within the window, at least 1 (up to {@code
     *     Long.MAX_VALUE}; stores keep sums exact up to 2<sup>53</sup>)
     * @param length the window length: a whole number of seconds, at least one second
     * @param unit what the window counts
     * @param precision {@link Duration#ZERO} for an exact window, otherwise the step entries are
     *     grouped by: a whole number of seconds, shorter than {@code length}, at most {@value
     *     #MAX_STEPS} steps per window
     * @param failurePolicy what the window does while the store cannot decide, or {@code null} to follow
     *     the limiter's choice for its unit (see {@link FailurePolicy})
     * @param calendar the calendar period and zone the window is aligned to, or {@code null} for a
     *     sliding window; a calendar window is exact ({@code precision} zero) and its {@code length} is
     *     its period's {@linkplain CalendarPeriod#nominalLength() nominal length}
     * @param mode {@link Mode#ENFORCE} (the default) or {@link Mode#SHADOW}: counted, never refusing
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code name} is blank, {@code limit} is below 1, {@code
     *     length} is not a positive whole number of seconds, or {@code precision} is not zero or a
     *     whole number of seconds shorter than {@code length} dividing it into at most {@value
     *     #MAX_STEPS} steps, or a calendar window has a precision or a length other than its
     *     period's nominal length
     */
    public Window {
        Checks.notBlank(name, "name");
        Checks.positive(limit, "limit");
        Checks.windowLength(length, "length");
        Checks.notNull(unit, "unit");
        Checks.notNull(precision, "precision");
        Checks.notNull(mode, "mode");
        if (!precision.isZero()) {
            Checks.windowLength(precision, "precision");
            if (precision.compareTo(length) >= 0) {
                throw new IllegalArgumentException(
                        "precision must be shorter than the window length " + length + ", was " + precision);
            }
            if (length.getSeconds() / precision.getSeconds() > MAX_STEPS) {
                throw new IllegalArgumentException(
                        "precision " + precision + " divides " + length + " into more than " + MAX_STEPS + " steps");
            }
        }
        if (calendar != null) {
            if (!precision.isZero()) {
                throw new IllegalArgumentException(
                        "precision must be zero in a calendar window (" + calendar + "), was " + precision);
            }
            if (!length.equals(calendar.period().nominalLength())) {
                throw new IllegalArgumentException("length of a calendar " + calendar.period() + " window must be "
                        + calendar.period().nominalLength() + ", was " + length);
            }
        }
    }

    /**
     * Creates an enforced window.
     *
     * @param name a short label used in headers, metrics and messages
     * @param limit the amount of the window's unit allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     * @param unit what the window counts
     * @param precision {@link Duration#ZERO} for an exact window, otherwise the step entries are
     *     grouped by
     * @param failurePolicy what the window does while the store cannot decide, or {@code null}
     * @param calendar the calendar period and zone, or {@code null} for a sliding window
     */
    public Window(
            String name,
            long limit,
            Duration length,
            Unit unit,
            Duration precision,
            @Nullable FailurePolicy failurePolicy,
            @Nullable Calendar calendar) {
        this(name, limit, length, unit, precision, failurePolicy, calendar, Mode.ENFORCE);
    }

    /**
     * Creates a sliding window.
     *
     * @param name a short label used in headers, metrics and messages
     * @param limit the amount of the window's unit allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     * @param unit what the window counts
     * @param precision {@link Duration#ZERO} for an exact window, otherwise the step entries are
     *     grouped by
     * @param failurePolicy what the window does while the store cannot decide, or {@code null}
     */
    public Window(
            String name,
            long limit,
            Duration length,
            Unit unit,
            Duration precision,
            @Nullable FailurePolicy failurePolicy) {
        this(name, limit, length, unit, precision, failurePolicy, null);
    }

    /**
     * Creates a window that follows the limiter's failure policy for its unit.
     *
     * @param name a short label used in headers, metrics and messages
     * @param limit the amount of the window's unit allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     * @param unit what the window counts
     * @param precision {@link Duration#ZERO} for an exact window, otherwise the step entries are
     *     grouped by
     */
    public Window(String name, long limit, Duration length, Unit unit, Duration precision) {
        this(name, limit, length, unit, precision, null, null);
    }

    /**
     * Creates an exact request window.
     *
     * @param name a short label for headers, metrics and messages
     * @param limit the number of requests allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     */
    public Window(String name, long limit, Duration length) {
        this(name, limit, length, Unit.REQUESTS, Duration.ZERO);
    }

    /**
     * Creates an exact request window named after its length: {@code "second"}, {@code "minute"},
     * {@code "hour"}, {@code "day"}, {@code "week"}, or otherwise the length in seconds such as
     * {@code "90s"}.
     *
     * @param limit the number of requests allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     * @return the window
     */
    public static Window of(long limit, Duration length) {
        Checks.windowLength(length, "length");
        return new Window(nameFor(length), limit, length);
    }

    /**
     * Creates an exact token window.
     *
     * @param name a short label for headers, metrics and messages, for example {@code
     *     "tokens-minute"}
     * @param limit the number of tokens allowed within the window, at least 1 (up to {@code
     *     Long.MAX_VALUE}; stores keep sums exact up to 2<sup>53</sup>)
     * @param length the window length, a whole number of seconds
     * @return the window
     */
    public static Window tokens(String name, long limit, Duration length) {
        return new Window(name, limit, length, Unit.TOKENS, Duration.ZERO);
    }

    /**
     * Creates an exact token window named {@code "tokens-"} plus the name {@link #of} would give
     * its length, for example {@code "tokens-minute"}.
     *
     * @param limit the number of tokens allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     * @return the window
     */
    public static Window tokens(long limit, Duration length) {
        Checks.windowLength(length, "length");
        return tokens("tokens-" + nameFor(length), limit, length);
    }

    /**
     * Creates an exact window of {@code unit}, such as a spend window in micro-dollars.
     *
     * @param name a short label for headers, metrics and messages, for example {@code "spend-day"}
     * @param limit the amount allowed within the window, at least 1 (stores keep sums exact up to
     *     2<sup>53</sup>: for micro-dollars, about 9 billion dollars)
     * @param length the window length, a whole number of seconds
     * @param unit what the window counts
     * @return the window
     */
    public static Window of(String name, long limit, Duration length, Unit unit) {
        return new Window(name, limit, length, unit, Duration.ZERO);
    }

    /**
     * Creates a window aligned to calendar periods in {@code zone}: it counts everything recorded
     * since the current period's start, and all of it leaves at the next period's start (local
     * midnight; daylight-saving changes and month lengths as the zone's rules have them). Retries and
     * resets point at that start. Around a boundary it admits up to twice its limit in a short span,
     * as every fixed window does.
     *
     * @param name a short label for headers, metrics and messages, for example {@code "spend-month"}
     * @param limit the amount allowed within one period, at least 1
     * @param unit what the window counts
     * @param period the calendar period: day, week (from Monday), month or year
     * @param zone the time zone whose midnights start the periods
     * @return the window
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code name} is blank or {@code limit} below 1
     */
    public static Window calendar(String name, long limit, Unit unit, CalendarPeriod period, ZoneId zone) {
        Calendar calendar = new Calendar(period, zone);
        return new Window(name, limit, period.nominalLength(), unit, Duration.ZERO, null, calendar);
    }

    /**
     * Creates a window aligned to calendar periods in UTC; see {@link #calendar(String, long, Unit,
     * CalendarPeriod, ZoneId)}.
     *
     * @param name a short label for headers, metrics and messages
     * @param limit the amount allowed within one period, at least 1
     * @param unit what the window counts
     * @param period the calendar period
     * @return the window
     */
    public static Window calendar(String name, long limit, Unit unit, CalendarPeriod period) {
        return calendar(name, limit, unit, period, ZoneOffset.UTC);
    }

    /**
     * Returns this window with entries grouped into steps of {@code step}: memory stays bounded
     * however many requests arrive, the window never admits more than its limit, and capacity comes
     * back at most one step later than in the exact window.
     *
     * @param step the precision, a whole number of seconds shorter than the window; {@link
     *     Duration#ZERO} makes the window exact again
     * @return the window with that precision
     */
    public Window withPrecision(Duration step) {
        return new Window(name, limit, length, unit, step, failurePolicy, calendar, mode);
    }

    /**
     * Returns this window with its own failure policy: what it does while the store cannot decide,
     * whatever the limiter's choice for its unit.
     *
     * @param policy {@link FailurePolicy#OPEN}, {@link FailurePolicy#CLOSED} or {@link
     *     FailurePolicy#LOCAL}
     * @return the window with that policy
     */
    public Window withFailurePolicy(FailurePolicy policy) {
        return new Window(name, limit, length, unit, precision, Checks.notNull(policy, "policy"), calendar, mode);
    }

    /**
     * Returns this window in {@code mode}: {@link Mode#SHADOW} counts it as if enforced and never
     * refuses, {@link Mode#ENFORCE} enforces it again.
     *
     * @param mode the mode
     * @return the window in that mode
     * @throws NullPointerException if {@code mode} is {@code null}
     */
    public Window withMode(Mode mode) {
        return new Window(name, limit, length, unit, precision, failurePolicy, calendar, Checks.notNull(mode, "mode"));
    }

    /**
     * Tells whether this window is in shadow mode: counted, never refusing.
     *
     * @return {@code true} for {@link Mode#SHADOW}
     */
    public boolean inShadow() {
        return mode == Mode.SHADOW;
    }

    /**
     * Returns the time at or before which an entry has left this window at {@code nowMillis}: one
     * length back, or for a calendar window the millisecond before the start of the period that
     * holds {@code nowMillis}. Stores trim at it.
     *
     * @param nowMillis the time of the decision in epoch milliseconds
     * @return the cutoff in epoch milliseconds
     */
    public long cutoffMillis(long nowMillis) {
        return calendar == null ? nowMillis - lengthMillis() : calendar.startMillis(nowMillis) - 1;
    }

    /**
     * Returns when an entry recorded at {@code recordedAtMillis} leaves this exact window: one length
     * later, or for a calendar window at the end of the period that holds it.
     *
     * @param recordedAtMillis the entry's time in epoch milliseconds
     * @return when it leaves, in epoch milliseconds
     */
    public long leavesAtMillis(long recordedAtMillis) {
        return calendar == null ? recordedAtMillis + lengthMillis() : calendar.endMillis(recordedAtMillis);
    }

    /**
     * Tells whether this window is aligned to calendar periods rather than sliding.
     *
     * @return {@code true} for a calendar window
     */
    public boolean isCalendar() {
        return calendar != null;
    }

    /**
     * Tells whether this window counts tokens.
     *
     * @return {@code true} for a token window
     */
    public boolean isTokens() {
        return unit.equals(Unit.TOKENS);
    }

    /**
     * Tells whether this window counts requests, one per admitted request, rather than an amount
     * each reservation declares.
     *
     * @return {@code true} for a request window
     */
    public boolean countsRequests() {
        return unit.isRequests();
    }

    /**
     * Tells whether every entry leaves this window exactly one length after it was recorded.
     *
     * @return {@code true} when the window has no precision step
     */
    public boolean isExact() {
        return precision.isZero();
    }

    /**
     * Returns the window length in whole seconds.
     *
     * @return the length in seconds
     */
    public long lengthSeconds() {
        return length.getSeconds();
    }

    /**
     * Returns the window length in milliseconds.
     *
     * @return the length in milliseconds
     */
    public long lengthMillis() {
        return length.toMillis();
    }

    /**
     * Returns the precision step in milliseconds.
     *
     * @return the step, 0 for an exact window
     */
    public long precisionMillis() {
        return precision.toMillis();
    }

    private static String nameFor(Duration length) {
        long seconds = length.getSeconds();
        if (seconds == 1) {
            return "second";
        } else if (seconds == 60) {
            return "minute";
        } else if (seconds == 3_600) {
            return "hour";
        } else if (seconds == 86_400) {
            return "day";
        } else if (seconds == 604_800) {
            return "week";
        }
        return seconds + "s";
    }
}
