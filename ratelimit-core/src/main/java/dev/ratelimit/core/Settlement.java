package dev.ratelimit.core;

import dev.ratelimit.api.Window;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link WindowStore} applies when a reservation is settled: the same scopes and entry id as
 * the {@link StoreRequest} that recorded it, the time it was recorded, its estimate and the tokens
 * actually used (or {@link #CANCEL}).
 *
 * <p>For each window: a cancel removes the request from request windows and its estimate from token
 * windows; a commit leaves request windows alone and settles token windows from the estimate to the
 * actual count, giving back the difference where the entry is still in the window and charging an
 * overrun at {@code now} (never rejected). Nothing happens to an entry that has left its window. In
 * a precision window the reservation's entry is the one of the step of {@code reservedAtMillis},
 * and an overrun is recorded in the step of {@code now}. An overrun counts in later evaluations like
 * any entry: requests wait for it to leave by the rule {@link Evaluation} states.
 *
 * @param scopes the scopes of the reservation, as in its request
 * @param entryId the entry id of the reservation's request
 * @param reservedAtMillis the time the store recorded the reservation at ({@link
 *     Evaluation#nowMillis()})
 * @param estimatedTokens the tokens the reservation charged to token windows
 * @param actualTokens the tokens used, at least 0, or {@link #CANCEL}
 * @param nowMillis the time of settling in epoch milliseconds, or {@link StoreRequest#STORE_TIME}
 * @param lease the reservation's lease, released in the same atomic step (exactly once: releasing
 *     it again, or after it expired, frees nothing), or {@code null}
 */
public record Settlement(
        List<StoreRequest.Scope> scopes,
        String entryId,
        long reservedAtMillis,
        long estimatedTokens,
        long actualTokens,
        long nowMillis,
        StoreRequest.@Nullable Lease lease) {

    /** The {@link #actualTokens()} value of a cancel. */
    public static final long CANCEL = -1;

    /**
     * Validates the components.
     *
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if a count or time is out of range
     */
    public Settlement {
        scopes = List.copyOf(Objects.requireNonNull(scopes, "scopes must not be null"));
        Objects.requireNonNull(entryId, "entryId must not be null");
        if (scopes.isEmpty()) {
            throw new IllegalArgumentException("scopes must not be empty");
        }
        if (estimatedTokens < 0) {
            throw new IllegalArgumentException("estimatedTokens must not be negative, was " + estimatedTokens);
        }
        if (actualTokens < CANCEL) {
            throw new IllegalArgumentException("actualTokens must be at least 0, or CANCEL, was " + actualTokens);
        }
        if (reservedAtMillis < 0) {
            throw new IllegalArgumentException("reservedAtMillis must not be negative, was " + reservedAtMillis);
        }
        if (nowMillis != StoreRequest.STORE_TIME && nowMillis < 0) {
            throw new IllegalArgumentException("nowMillis must not be negative, was " + nowMillis);
        }
        if (lease != null && !lease.heldIn(scopes)) {
            throw new IllegalArgumentException(
                    "the lease's scope '" + lease.subject() + "' is none of the settlement's");
        }
    }

    /**
     * Creates a settlement that releases no lease.
     *
     * @param scopes the scopes of the reservation
     * @param entryId the entry id of the reservation's request
     * @param reservedAtMillis the time the store recorded the reservation at
     * @param estimatedTokens the tokens the reservation charged to token windows
     * @param actualTokens the tokens used, or {@link #CANCEL}
     * @param nowMillis the time of settling, or {@link StoreRequest#STORE_TIME}
     */
    public Settlement(
            List<StoreRequest.Scope> scopes,
            String entryId,
            long reservedAtMillis,
            long estimatedTokens,
            long actualTokens,
            long nowMillis) {
        this(scopes, entryId, reservedAtMillis, estimatedTokens, actualTokens, nowMillis, null);
    }

    /**
     * Tells whether this settlement cancels the reservation.
     *
     * @return {@code true} for a cancel
     */
    public boolean isCancel() {
        return actualTokens == CANCEL;
    }

    /**
     * Tells whether the settlement carries its own time rather than asking for the store's clock.
     *
     * @return {@code true} when {@link #nowMillis()} is a timestamp
     */
    public boolean hasTime() {
        return nowMillis != StoreRequest.STORE_TIME;
    }

    /**
     * Returns what the reservation charged a window: 1 for a request window, the estimate for a
     * token window.
     *
     * @param window one of the reservation's windows
     * @return the weight recorded
     */
    public long estimateIn(Window window) {
        return window.isTokens() ? estimatedTokens : 1;
    }

    /**
     * Returns what a window should hold for the reservation once settled: 0 on cancel, 1 for a
     * request window on commit, the actual count for a token window on commit.
     *
     * @param window one of the reservation's windows
     * @return the settled weight
     */
    public long targetIn(Window window) {
        if (isCancel()) {
            return 0;
        }
        return window.isTokens() ? actualTokens : 1;
    }
}
