package dev.ratelimit.core;

import java.util.Arrays;

/**
 * What a {@link WindowStore} answers for one {@link StoreRequest}: allowed, with every window's
 * count after recording, or rejected by one window, with the time until its oldest entry leaves it.
 */
public final class Evaluation {

    private final int rejectedIndex;
    private final long[] used;
    private final long[] resetAfterMillis;

    private Evaluation(int rejectedIndex, long[] used, long[] resetAfterMillis) {
        this.rejectedIndex = rejectedIndex;
        this.used = used;
        this.resetAfterMillis = resetAfterMillis;
    }

    /**
     * Creates the answer for a recorded request.
     *
     * @param used each window's count after recording, in request order
     * @param resetAfterMillis for each window, milliseconds until its oldest entry leaves it
     * @return the evaluation
     */
    public static Evaluation allowed(long[] used, long[] resetAfterMillis) {
        if (used.length == 0 || used.length != resetAfterMillis.length) {
            throw new IllegalArgumentException("used and resetAfterMillis must have one entry per window");
        }
        return new Evaluation(-1, used.clone(), resetAfterMillis.clone());
    }

    /**
     * Creates the answer for a rejected request; nothing was recorded.
     *
     * @param windowIndex the index, in request order, of the window that rejected
     * @param used that window's count
     * @param retryAfterMillis milliseconds until the oldest entry of that window leaves it
     * @return the evaluation
     */
    public static Evaluation rejected(int windowIndex, long used, long retryAfterMillis) {
        if (windowIndex < 0) {
            throw new IllegalArgumentException("windowIndex must not be negative, was " + windowIndex);
        }
        return new Evaluation(windowIndex, new long[] {used}, new long[] {retryAfterMillis});
    }

    /**
     * Tells whether the request was recorded.
     *
     * @return {@code true} when allowed
     */
    public boolean isAllowed() {
        return rejectedIndex < 0;
    }

    /**
     * Returns the index, in request order, of the window that rejected.
     *
     * @return the index, or -1 when allowed
     */
    public int rejectedIndex() {
        return rejectedIndex;
    }

    /**
     * Returns a window's count: after recording when allowed; for the rejecting window when
     * rejected.
     *
     * @param windowIndex the window's index in request order (when rejected: {@link #rejectedIndex()})
     * @return the count
     */
    public long used(int windowIndex) {
        return used[slot(windowIndex)];
    }

    /**
     * Returns the milliseconds until a window's oldest entry leaves it; when rejected, this is the
     * retry delay of the rejecting window.
     *
     * @param windowIndex the window's index in request order (when rejected: {@link #rejectedIndex()})
     * @return milliseconds, not negative
     */
    public long resetAfterMillis(int windowIndex) {
        return Math.max(0, resetAfterMillis[slot(windowIndex)]);
    }

    /**
     * Returns the number of windows this evaluation describes.
     *
     * @return every window's when allowed; 1 when rejected
     */
    public int size() {
        return used.length;
    }

    private int slot(int windowIndex) {
        if (isAllowed()) {
            return windowIndex;
        }
        if (windowIndex != rejectedIndex) {
            throw new IndexOutOfBoundsException(
                    "a rejected evaluation describes window " + rejectedIndex + " only, asked for " + windowIndex);
        }
        return 0;
    }

    @Override
    public String toString() {
        return isAllowed()
                ? "Evaluation{allowed, used=" + Arrays.toString(used) + ", resetAfterMillis="
                        + Arrays.toString(resetAfterMillis) + "}"
                : "Evaluation{rejected by window " + rejectedIndex + ", used=" + used[0] + ", retryAfterMillis="
                        + resetAfterMillis[0] + "}";
    }
}
