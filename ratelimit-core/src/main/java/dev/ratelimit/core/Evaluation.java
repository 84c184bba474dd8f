package dev.ratelimit.core;

import java.util.Arrays;

/**
 * What a {@link WindowStore} answers for one {@link StoreRequest}: allowed (recorded in every
 * window), rejected by one window with the time until the request would fit, or too large for one
 * window to ever admit; in every case with each window's state and the time the store decided at.
 *
 * <p>The rejection rule, stated once for every store: windows are looked at in request order, and
 * the first window that cannot take the request decides. A window of an amount unit (tokens, spend)
 * whose limit is below the request's amount of that unit ({@link StoreRequest#weightIn}) makes the
 * request {@link #tooLarge too large}: no wait can help. Otherwise a window where {@code used + need
 * > limit} rejects it, where {@code need} is 1 for a request window and {@code max(amount, 1)} for a
 * window of any other unit (such a window that is used up rejects even a request reserving none of
 * its unit). Its retry delay is the time until enough weight has left that window for
 * the same request to fit: with entries oldest first, the entry at which the running sum of weights
 * first reaches {@code used + need - limit} leaves at its time plus the window length. At {@code
 * now + retry} the same request fits if nothing else arrived, and not one millisecond earlier.
 *
 * <p>Once a window has rejected (or found the request too large), the store leaves every later
 * window that is longer than it alone: it runs nothing on it and reports it as {@link
 * #NOT_EVALUATED} ({@link StoreRequest#skipsAfter(int, int)} names them). Such a window cannot change
 * the answer, and its state is unknown: the decision's usage leaves it out rather than report a
 * made-up or stale figure. Later windows no longer than the rejecting one (the same minute's tokens
 * after its requests, say) are evaluated and reported as usual.
 */
public final class Evaluation {

    /**
     * What {@link #used} and {@link #resetAfterMillis} report for a window the store did not evaluate:
     * after a rejection, a later window longer than the rejecting one.
     */
    public static final long NOT_EVALUATED = -1;

    private static final int ALLOWED = -1;
    private static final int LEASE_REFUSED = -2;

    private final long nowMillis;
    private final int index;
    private final boolean tooLarge;
    private final long retryAfterMillis;
    private final long[] used;
    private final long[] resetAfterMillis;

    private Evaluation(
            long nowMillis, int index, boolean tooLarge, long retryAfterMillis, long[] used, long[] resetAfterMillis) {
        if (used.length != resetAfterMillis.length) {
            throw new IllegalArgumentException("used and resetAfterMillis must have one entry per window");
        }
        if (index >= used.length) {
            throw new IllegalArgumentException(
                    "window index " + index + " is out of range for " + used.length + " windows");
        }
        for (int i = 0; i < used.length; i++) {
            boolean skipped = used[i] == NOT_EVALUATED && resetAfterMillis[i] == NOT_EVALUATED;
            if (skipped && (index < 0 || i <= index)) {
                throw new IllegalArgumentException("only a window after the rejecting one can be left unevaluated,"
                        + " window " + i + (index == ALLOWED ? " of an allowed request" : " rejected by " + index));
            }
            if (!skipped && (used[i] < 0 || resetAfterMillis[i] < 0)) {
                throw new IllegalArgumentException("used and resetAfterMillis must not be negative, window " + i + ": "
                        + used[i] + ", " + resetAfterMillis[i]);
            }
        }
        this.nowMillis = nowMillis;
        this.index = index;
        this.tooLarge = tooLarge;
        this.retryAfterMillis = retryAfterMillis;
        this.used = used.clone();
        this.resetAfterMillis = resetAfterMillis.clone();
    }

    /**
     * Creates the answer for a recorded request.
     *
     * @param nowMillis the time the store recorded the request at (what a settlement names)
     * @param used each window's sum after recording, in request order
     * @param resetAfterMillis for each window, milliseconds until its oldest entry leaves it (0 when
     *     empty)
     * @return the evaluation
     */
    public static Evaluation allowed(long nowMillis, long[] used, long[] resetAfterMillis) {
        return new Evaluation(nowMillis, ALLOWED, false, 0, used, resetAfterMillis);
    }

    /**
     * Creates the answer for a rejected request; nothing was recorded.
     *
     * @param nowMillis the time the store decided at
     * @param windowIndex the index, in request order, of the window that rejected
     * @param retryAfterMillis milliseconds until the request would fit in that window, by the rule
     *     above; at least 1
     * @param used each window's sum, in request order; {@link #NOT_EVALUATED} for a window left alone
     * @param resetAfterMillis for each window, milliseconds until its oldest entry leaves it; {@link
     *     #NOT_EVALUATED} for a window left alone
     * @return the evaluation
     */
    public static Evaluation rejected(
            long nowMillis, int windowIndex, long retryAfterMillis, long[] used, long[] resetAfterMillis) {
        if (windowIndex < 0) {
            throw new IllegalArgumentException("windowIndex must not be negative, was " + windowIndex);
        }
        if (retryAfterMillis < 1) {
            throw new IllegalArgumentException("retryAfterMillis must be at least 1, was " + retryAfterMillis);
        }
        return new Evaluation(nowMillis, windowIndex, false, retryAfterMillis, used, resetAfterMillis);
    }

    /**
     * Creates the answer for a request that reserves more of a unit than a window of that unit
     * allows; nothing was recorded.
     *
     * @param nowMillis the time the store decided at
     * @param windowIndex the index, in request order, of the window whose limit is below the
     *     request's amount of its unit
     * @param used each window's sum, in request order; {@link #NOT_EVALUATED} for a window left alone
     * @param resetAfterMillis for each window, milliseconds until its oldest entry leaves it; {@link
     *     #NOT_EVALUATED} for a window left alone
     * @return the evaluation
     */
    public static Evaluation tooLarge(long nowMillis, int windowIndex, long[] used, long[] resetAfterMillis) {
        if (windowIndex < 0) {
            throw new IllegalArgumentException("windowIndex must not be negative, was " + windowIndex);
        }
        return new Evaluation(nowMillis, windowIndex, true, 0, used, resetAfterMillis);
    }

    /**
     * Creates the answer for a request whose windows all had room but whose {@linkplain
     * StoreRequest#lease() lease} found its scope's cap already held; nothing was recorded.
     *
     * @param nowMillis the time the store decided at
     * @param used each window's sum without this request, in request order (every window evaluated)
     * @param resetAfterMillis for each window, milliseconds until its oldest entry leaves it
     * @return the evaluation
     */
    public static Evaluation leaseRefused(long nowMillis, long[] used, long[] resetAfterMillis) {
        return new Evaluation(nowMillis, LEASE_REFUSED, false, 0, used, resetAfterMillis);
    }

    /**
     * Tells whether the request was refused because its lease's scope already holds its cap.
     *
     * @return {@code true} when refused by the lease
     */
    public boolean isLeaseRefused() {
        return index == LEASE_REFUSED;
    }

    /**
     * Tells whether the request was recorded.
     *
     * @return {@code true} when allowed
     */
    public boolean isAllowed() {
        return index == ALLOWED;
    }

    /**
     * Tells whether the request was rejected because it can never fit.
     *
     * @return {@code true} when too large
     */
    public boolean isTooLarge() {
        return tooLarge;
    }

    /**
     * Returns the index, in request order, of the window that rejected.
     *
     * @return the index, or -1 when allowed or refused by the lease
     */
    public int rejectedIndex() {
        return index < 0 ? -1 : index;
    }

    /**
     * Returns the milliseconds until the rejected request would fit.
     *
     * @return at least 1 when rejected; 0 when allowed or too large
     */
    public long retryAfterMillis() {
        return retryAfterMillis;
    }

    /**
     * Returns the time the store decided at: the reservation's time for a later settlement.
     *
     * @return epoch milliseconds
     */
    public long nowMillis() {
        return nowMillis;
    }

    /**
     * Tells whether the store evaluated a window: every window of an allowed request, and after a
     * rejection every window but the later, longer ones it left alone.
     *
     * @param windowIndex the window's index in request order
     * @return {@code false} when the window's state is unknown
     */
    public boolean evaluated(int windowIndex) {
        return used[windowIndex] != NOT_EVALUATED;
    }

    /**
     * Returns a window's sum: after recording when allowed, without this request otherwise.
     *
     * @param windowIndex the window's index in request order
     * @return the sum of the window's unit counted, or {@link #NOT_EVALUATED}
     */
    public long used(int windowIndex) {
        return used[windowIndex];
    }

    /**
     * Returns the milliseconds until a window's oldest entry leaves it.
     *
     * @param windowIndex the window's index in request order
     * @return milliseconds, 0 when the window is empty, or {@link #NOT_EVALUATED}
     */
    public long resetAfterMillis(int windowIndex) {
        return resetAfterMillis[windowIndex];
    }

    /**
     * Returns the number of windows this evaluation describes.
     *
     * @return the request's window count
     */
    public int size() {
        return used.length;
    }

    @Override
    public String toString() {
        String outcome = isAllowed()
                ? "allowed"
                : isLeaseRefused()
                        ? "lease refused"
                        : (tooLarge ? "too large for window " : "rejected by window ") + index;
        return "Evaluation{" + outcome
                + (isAllowed() || tooLarge || isLeaseRefused() ? "" : ", retryAfterMillis=" + retryAfterMillis)
                + ", now=" + nowMillis + ", used=" + Arrays.toString(used) + ", resetAfterMillis="
                + Arrays.toString(resetAfterMillis) + "}";
    }
}
