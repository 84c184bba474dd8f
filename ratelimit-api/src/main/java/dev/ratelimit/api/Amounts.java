package dev.ratelimit.api;

import dev.ratelimit.api.Window.Unit;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a reservation charges besides its one request: an amount per {@link Unit}, such as 1,200
 * tokens and 4,500 micro-dollars. A window counts the amount of its own unit; a unit a reservation
 * does not name counts 0 there (a window of it still needs room for 1, as a used-up token window
 * refuses even a request of no tokens).
 *
 * <pre>{@code
 * Amounts estimate = Amounts.tokens(1_200).and(Unit.USD_MICROS, 4_500);
 * Reservation r = limiter.reserve(userId, tier, estimate, budgets);
 * ...
 * r.commit(Amounts.tokens(900).and(Unit.USD_MICROS, 3_100));
 * }</pre>
 *
 * <p>Requests are not an amount: every reservation counts exactly 1 in request windows. Instances
 * are immutable; amounts are non-negative (stores keep sums exact up to 2<sup>53</sup>).
 */
public final class Amounts {

    private static final Amounts NONE = new Amounts(new Unit[0], new long[0]);

    private final Unit[] units;
    private final long[] amounts;

    private Amounts(Unit[] units, long[] amounts) {
        this.units = units;
        this.amounts = amounts;
    }

    /**
     * Returns amounts of nothing: a reservation of one request alone.
     *
     * @return the empty amounts
     */
    public static Amounts none() {
        return NONE;
    }

    /**
     * Returns an amount of tokens alone.
     *
     * @param tokens the tokens, at least 0
     * @return the amounts
     * @throws IllegalArgumentException if {@code tokens} is negative
     */
    public static Amounts tokens(long tokens) {
        return of(Unit.TOKENS, tokens);
    }

    /**
     * Returns an amount of one unit.
     *
     * @param unit the unit; not {@link Unit#REQUESTS}
     * @param amount the amount, at least 0
     * @return the amounts
     * @throws NullPointerException if {@code unit} is {@code null}
     * @throws IllegalArgumentException if {@code unit} is {@link Unit#REQUESTS} or {@code amount} is
     *     negative
     */
    public static Amounts of(Unit unit, long amount) {
        return NONE.and(unit, amount);
    }

    /**
     * Returns these amounts with {@code amount} of {@code unit} added beside them.
     *
     * @param unit the unit; not {@link Unit#REQUESTS}, and not one these amounts already name
     * @param amount the amount, at least 0
     * @return new amounts
     * @throws NullPointerException if {@code unit} is {@code null}
     * @throws IllegalArgumentException if {@code unit} is {@link Unit#REQUESTS} or already named, or
     *     {@code amount} is negative
     */
    public Amounts and(Unit unit, long amount) {
        Checks.notNull(unit, "unit");
        if (unit.isRequests()) {
            throw new IllegalArgumentException("unit must not be requests: every reservation counts exactly 1 request");
        }
        if (amount < 0) {
            throw new IllegalArgumentException("amount of " + unit + " must not be negative, was " + amount);
        }
        if (has(unit)) {
            throw new IllegalArgumentException("unit " + unit + " is given twice");
        }
        Unit[] moreUnits = Arrays.copyOf(units, units.length + 1);
        long[] moreAmounts = Arrays.copyOf(amounts, amounts.length + 1);
        moreUnits[units.length] = unit;
        moreAmounts[units.length] = amount;
        return new Amounts(moreUnits, moreAmounts);
    }

    /**
     * Returns the amount of a unit.
     *
     * @param unit the unit
     * @return the amount named, 0 when these amounts do not name the unit (always for requests)
     */
    public long get(Unit unit) {
        for (int i = 0; i < units.length; i++) {
            if (units[i].equals(unit)) {
                return amounts[i];
            }
        }
        return 0;
    }

    /**
     * Tells whether these amounts name a unit.
     *
     * @param unit the unit
     * @return {@code true} when named, even with an amount of 0
     */
    public boolean has(Unit unit) {
        for (Unit named : units) {
            if (named.equals(unit)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Returns the units named, in the order they were added.
     *
     * @return the units
     */
    public Set<Unit> units() {
        return Collections.unmodifiableSet(new LinkedHashSet<>(Arrays.asList(units)));
    }

    /**
     * Returns these amounts with every unit of {@code others} that these do not name added at its
     * amount there: what a settlement applies, where a unit the commit does not name keeps its
     * estimate.
     *
     * @param others the amounts to fall back on
     * @return the merged amounts
     */
    public Amounts orElse(Amounts others) {
        Checks.notNull(others, "others");
        Amounts merged = this;
        for (int i = 0; i < others.units.length; i++) {
            if (!has(others.units[i])) {
                merged = merged.and(others.units[i], others.amounts[i]);
            }
        }
        return merged;
    }

    /**
     * Tells whether every amount is 0.
     *
     * @return {@code true} when nothing but the request is charged
     */
    public boolean isZero() {
        for (long amount : amounts) {
            if (amount != 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(@Nullable Object other) {
        if (this == other) {
            return true;
        }
        if (!(other instanceof Amounts that) || that.units.length != units.length) {
            return false;
        }
        for (int i = 0; i < units.length; i++) {
            if (!that.has(units[i]) || that.get(units[i]) != amounts[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int hash = 0;
        for (int i = 0; i < units.length; i++) {
            hash += units[i].hashCode() ^ Long.hashCode(amounts[i]);
        }
        return hash;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("{");
        for (int i = 0; i < units.length; i++) {
            text.append(i == 0 ? "" : ", ").append(units[i]).append('=').append(amounts[i]);
        }
        return text.append('}').toString();
    }
}
