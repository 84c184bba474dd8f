package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import java.util.Objects;

/**
 * A lease on a slice of a shared budget: an amount of each of its units (requests included) that
 * one instance takes from the budget in one atomic store call and then spends locally, returning
 * what it did not use.
 *
 * <p>A lease is one entry in every window of the budget, named by {@link #entryId()}, weighing the
 * slice's amount of the window's unit ({@link #weightIn}), recorded at its {@linkplain
 * WindowStore#takeLease taking} but <em>stamped at the lease's end</em>, {@code now +
 * durationMillis}: it counts from the moment it is recorded until its stamp plus the window's length.
 * The holder spends it only until that stamp, so every unit it admits stays counted for at least a
 * window's length after it was admitted, and no window-length span ever holds more than the limit
 * across all instances. A holder that stops (dies) holds its slice until the entry leaves the window:
 * the idle capacity is at most the sum of the leases outstanding.
 *
 * <p>The budget's windows must be exact sliding windows: a precision window (a ring of steps) or a
 * calendar window holds no lease. The duration is at most {@link #MAX_DURATION_MILLIS}: a store keeps
 * a window's state for at least a second past the time its newest entry at {@code now} leaves, so an
 * entry stamped up to a second ahead is kept by any later call's expiry.
 *
 * @param budget the shared budget's scope: its exact sliding windows
 * @param requests the requests leased, counted in the budget's request windows; from 0 to {@link
 *     #MAX_REQUESTS}
 * @param amounts the amount of each other unit leased, counted in that unit's windows
 * @param entryId the lease's name in the store, unique among all requests and leases
 * @param durationMillis how long the holder spends the lease: its entry is stamped that long after
 *     it is taken; from 1 to {@link #MAX_DURATION_MILLIS}, and shorter than the budget's shortest
 *     window
 */
public record BudgetLease(
        StoreRequest.Scope budget, long requests, Amounts amounts, String entryId, long durationMillis) {

    /** The longest lease: one second, the margin every store keeps a window's state beyond its entries. */
    public static final long MAX_DURATION_MILLIS = 1_000;

    /** The most requests one lease takes (a store records each as an entry of its own). */
    public static final long MAX_REQUESTS = 1_000;

    /**
     * Validates the lease.
     *
     * @param budget the shared budget's scope: its exact sliding windows
     * @param requests the requests leased, counted in the budget's request windows; from 0 to {@link
     *     #MAX_REQUESTS}
     * @param amounts the amount of each other unit leased, counted in that unit's windows
     * @param entryId the lease's name in the store, unique among all requests and leases
     * @param durationMillis how long the holder spends the lease: its entry is stamped that long after
     *     it is taken; from 1 to {@link #MAX_DURATION_MILLIS}, and shorter than the budget's shortest
     *     window
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if the budget is not shared or has a window that is not an exact
     *     sliding window, the entry id is empty, the requests are negative, or the duration is out of
     *     range
     */
    public BudgetLease {
        Objects.requireNonNull(budget, "budget must not be null");
        Objects.requireNonNull(amounts, "amounts must not be null");
        Objects.requireNonNull(entryId, "entryId must not be null");
        if (!budget.shared()) {
            throw new IllegalArgumentException(
                    "budget must be a shared scope, was the user '" + budget.subject() + "'");
        }
        if (budget.windows().isEmpty()) {
            throw new IllegalArgumentException("budget '" + budget.subject() + "' must have windows");
        }
        for (Window window : budget.windows()) {
            if (!window.isExact() || window.isCalendar()) {
                throw new IllegalArgumentException("budget windows must be exact sliding windows to be leased, "
                        + window + " of '" + budget.subject() + "' is a precision or calendar window");
            }
            if (durationMillis >= window.lengthMillis()) {
                throw new IllegalArgumentException(
                        "durationMillis must be shorter than every window of the budget, was " + durationMillis
                                + " for " + window);
            }
        }
        if (entryId.isEmpty()) {
            throw new IllegalArgumentException("entryId must not be empty");
        }
        if (requests < 0 || requests > MAX_REQUESTS) {
            throw new IllegalArgumentException("requests must be from 0 to " + MAX_REQUESTS + ", was " + requests);
        }
        if (durationMillis < 1 || durationMillis > MAX_DURATION_MILLIS) {
            throw new IllegalArgumentException(
                    "durationMillis must be from 1 to " + MAX_DURATION_MILLIS + ", was " + durationMillis);
        }
    }

    /**
     * Checks the arguments of {@link WindowStore#exchangeLease}: a store that overrides it calls this
     * first.
     *
     * @param returned the lease returned
     * @param stampMillis its stamp
     * @param taking the lease taken
     * @throws NullPointerException if a lease is {@code null}
     * @throws IllegalArgumentException if the leases are of different budgets, share an entry id, or
     *     the stamp is {@link Settlement#IN_DOUBT}
     */
    public static void checkExchange(BudgetLease returned, long stampMillis, BudgetLease taking) {
        Objects.requireNonNull(returned, "returned must not be null");
        Objects.requireNonNull(taking, "taking must not be null");
        if (!returned.budget().equals(taking.budget())) {
            throw new IllegalArgumentException("taking must lease the budget returned, '"
                    + returned.budget().subject() + "', was '" + taking.budget().subject() + "'");
        }
        if (returned.entryId().equals(taking.entryId())) {
            throw new IllegalArgumentException(
                    "taking must have an entry id of its own, was the returned lease's '" + taking.entryId() + "'");
        }
        if (stampMillis == Settlement.IN_DOUBT) {
            throw new IllegalArgumentException(
                    "stampMillis must be the returned lease's stamp: a lease in doubt is returned alone");
        }
    }

    /**
     * Returns what the lease weighs in one of its budget's windows: its requests in a request window,
     * its amount of the window's unit in any other (0 when it names none).
     *
     * @param window one of the budget's windows
     * @return the weight
     */
    public long weightIn(Window window) {
        return window.countsRequests() ? requests : amounts.get(window.unit());
    }

    /**
     * Returns the time the lease's entry is stamped at when it is taken at {@code nowMillis}: its end.
     *
     * @param nowMillis the time the store took the lease at ({@link Evaluation#nowMillis()})
     * @return {@code nowMillis + durationMillis}
     */
    public long stampMillis(long nowMillis) {
        return nowMillis + durationMillis;
    }
}
