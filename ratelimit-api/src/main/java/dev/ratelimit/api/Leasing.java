package dev.ratelimit.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How each instance leases a slice of a {@link SharedBudget} instead of charging the budget in the
 * store on every request: the instance takes a slice (requests, tokens, dollars...) in one store
 * call, admits requests against it in memory, exactly, and returns what it did not use when the
 * lease ends or runs low. A hot budget (one model's upstream cap, shared by every tenant on every
 * instance) then costs the store one call per lease rather than one per request.
 *
 * <p>Leasing keeps the budget's guarantee: in any window-length span of real time, never more than
 * the limit is admitted across all instances (a lease is recorded in the budget's windows stamped
 * at its end, so no unit leaves a window before any use of it could). Its price is idle capacity: a
 * slice leased and not yet used or returned is counted though no one uses it, at most the sum of
 * the leases outstanding, and an instance that dies holds its slice until the lease's entry leaves
 * the window (its duration plus the window's length after it was taken).
 *
 * <p>A leased budget's windows must be exact sliding windows, not in shadow. A request whose share
 * of the budget is larger than a lease is reserved in the store directly, as without leasing.
 *
 * @param requests the requests of a fixed lease, 0 when {@link #adaptive()}
 * @param amounts the amounts of a fixed lease, none when {@link #adaptive()}
 * @param duration how long an instance spends one lease before returning it, or {@code null} for the
 *     default: a second, or a tenth of the budget's shortest window when that is shorter
 * @param adaptive {@code true} when each instance sizes its leases by its own recent use
 */
public record Leasing(
        long requests, Amounts amounts, @Nullable Duration duration, boolean adaptive) {

    /** The longest lease: its entry is stamped at most this far ahead of the time it is taken. */
    public static final Duration MAX_DURATION = Duration.ofSeconds(1);

    /** The most requests one lease takes. */
    public static final long MAX_REQUESTS = 1_000;

    /**
     * Validates the components.
     *
     * @param requests the requests of a fixed lease, 0 when {@link #adaptive()}
     * @param amounts the amounts of a fixed lease, none when {@link #adaptive()}
     * @param duration how long an instance spends one lease before returning it, or {@code null} for the
     *     default: a second, or a tenth of the budget's shortest window when that is shorter
     * @param adaptive {@code true} when each instance sizes its leases by its own recent use
     * @throws NullPointerException if {@code amounts} is {@code null}
     * @throws IllegalArgumentException if the requests are out of range, a fixed lease leases nothing,
     *     or the duration is not from 1 ms to {@link #MAX_DURATION}
     */
    public Leasing {
        Checks.notNull(amounts, "amounts");
        if (requests < 0 || requests > MAX_REQUESTS) {
            throw new IllegalArgumentException("requests must be from 0 to " + MAX_REQUESTS + ", was " + requests);
        }
        if (adaptive && (requests != 0 || !amounts.isZero())) {
            throw new IllegalArgumentException("an adaptive lease has no fixed requests or amounts");
        }
        if (!adaptive && requests == 0 && amounts.isZero()) {
            throw new IllegalArgumentException("a fixed lease must lease some requests or amounts");
        }
        if (duration != null && (duration.toMillis() < 1 || duration.compareTo(MAX_DURATION) > 0)) {
            throw new IllegalArgumentException("duration must be from 1 ms to " + MAX_DURATION + ", was " + duration);
        }
    }

    /**
     * Returns leases each instance sizes by its recent use: an instance leases the budget once it
     * has seen four of its requests within a lease's duration (thinner traffic reserves per request,
     * where a lease would cost more store calls than it saves); a first lease covers the request
     * that takes it, a lease used up before its end is followed by one twice as large in each unit
     * it had used at least half of (and twice what was used in the others), and one that ends is
     * followed by one of twice what was used, at most a tenth of the budget's smallest limit of each
     * unit (and {@link #MAX_REQUESTS}). Thin traffic takes small leases, or none; a unit that does
     * not bind stays near its use.
     *
     * @return adaptive leasing of the default duration
     */
    public static Leasing auto() {
        return new Leasing(0, Amounts.none(), null, true);
    }

    /**
     * Returns leases of a fixed size: each lease takes {@code requests} requests and {@code amounts}
     * of the other units (a unit it does not name is leased at 0, so a request charging that unit
     * reserves directly).
     *
     * @param requests the requests per lease, from 0 to {@link #MAX_REQUESTS}
     * @param amounts the amount of each other unit per lease
     * @return fixed leasing of the default duration
     */
    public static Leasing of(long requests, Amounts amounts) {
        return new Leasing(requests, amounts, null, false);
    }

    /**
     * Returns this leasing with another duration.
     *
     * @param duration how long an instance spends one lease, from 1 ms to {@link #MAX_DURATION};
     *     shorter than the budget's shortest window
     * @return the leasing
     */
    public Leasing withDuration(Duration duration) {
        Checks.notNull(duration, "duration");
        return new Leasing(requests, amounts, duration, adaptive);
    }

    /**
     * A lease one instance holds now on a leased budget, as {@link RateLimiter#leases()} reports it:
     * a snapshot for status pages, not a handle.
     *
     * @param budget the budget's {@linkplain SharedBudget#name() name}
     * @param size what the lease took of each unit ({@link Window.Unit#REQUESTS} included), in the
     *     budget's order of units
     * @param used what this instance has admitted from it so far, per unit (a refund on settling
     *     lowers it); the rest is idle until used or returned
     * @param endsAt when the instance stops spending it and returns what it did not use, on its clock
     */
    public record Held(String budget, Map<Window.Unit, Long> size, Map<Window.Unit, Long> used, Instant endsAt) {

        /**
         * Validates the components and copies the maps, keeping their order.
         *
         * @param budget the budget's {@linkplain SharedBudget#name() name}
         * @param size what the lease took of each unit ({@link Window.Unit#REQUESTS} included), in the
         *     budget's order of units
         * @param used what this instance has admitted from it so far, per unit (a refund on settling
         *     lowers it); the rest is idle until used or returned
         * @param endsAt when the instance stops spending it and returns what it did not use, on its clock
         * @throws NullPointerException if an argument is {@code null}
         */
        public Held {
            Checks.notNull(budget, "budget");
            Checks.notNull(endsAt, "endsAt");
            size = Collections.unmodifiableMap(new LinkedHashMap<>(Checks.notNull(size, "size")));
            used = Collections.unmodifiableMap(new LinkedHashMap<>(Checks.notNull(used, "used")));
        }
    }
}
