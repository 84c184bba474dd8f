package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link WindowStore} applies when a reservation is settled: the same scopes and entry id as
 * the {@link StoreRequest} that recorded it, the time it was recorded, its estimate and the amounts
 * actually used (or a cancel).
 *
 * <p>For each window: a cancel removes the request from request windows and its estimate from the
 * windows of every other unit; a commit leaves request windows alone and settles each other window
 * from its unit's estimate to its unit's actual amount ({@link #targetIn}), giving back the
 * difference where the entry is still in the window and charging an overrun at {@code now} (never
 * rejected). Nothing happens to an entry that has left its window. In a precision window the
 * reservation's entry is the one of the step of {@code reservedAtMillis}, and an overrun is recorded
 * in the step of {@code now}. An overrun counts in later evaluations like any entry: requests wait
 * for it to leave by the rule {@link Evaluation} states.
 *
 * <p>Settling is idempotent by entry id: applying the same settlement again, or a commit after a
 * cancel, changes nothing (a store keeps the proof for {@link #REPEAT_GUARD} where a window of an
 * amount is touched; request windows and lease releases are idempotent as they are). So a limiter
 * may retry a settlement whose earlier attempt failed without knowing whether it reached the store.
 *
 * @param scopes the scopes of the reservation, as in its request
 * @param entryId the entry id of the reservation's request
 * @param reservedAtMillis the time the store recorded the reservation at ({@link
 *     Evaluation#nowMillis()}), or {@link #IN_DOUBT} for a cancel of a reservation whose store call
 *     timed out: the store may or may not have recorded it
 * @param estimate the amount of each unit the reservation charged
 * @param actual the amount of each unit used, or {@code null} to cancel; a unit it does not name
 *     stays at its estimate
 * @param nowMillis the time of settling in epoch milliseconds, or {@link StoreRequest#STORE_TIME}
 * @param lease the reservation's lease, released in the same atomic step (exactly once: releasing
 *     it again, or after it expired, frees nothing), or {@code null}
 */
public record Settlement(
        List<StoreRequest.Scope> scopes,
        String entryId,
        long reservedAtMillis,
        Amounts estimate,
        @Nullable Amounts actual,
        long nowMillis,
        StoreRequest.@Nullable Lease lease) {

    /**
     * How long a store remembers that it applied a settlement of a window of an amount: within this
     * time, applying the settlement of the same entry id again (a retry whose earlier attempt
     * reached the store though its reply was lost, or a commit after a cancel) changes nothing. A
     * limiter retries a settlement the store could not take for at most this long.
     */
    public static final Duration REPEAT_GUARD = Duration.ofMinutes(15);

    /**
     * The {@code reservedAtMillis} of a cancel whose reservation may never have been recorded (its
     * store call timed out, and the store may have run it late or not at all). The store applies
     * such a cancel only where it finds the entry: in exact windows by entry id, and in precision
     * windows at the time an exact window of the same call holds the entry at; when no exact window
     * holds it, only the lease is released (a precision window alone cannot tell whether it counts
     * the entry, so it keeps it: more counted, never less).
     */
    public static final long IN_DOUBT = -1;

    /** The {@code actualTokens} value of a cancel, for the constructors counting tokens alone. */
    public static final long CANCEL = -1;

    /**
     * Validates the components.
     *
     * @param scopes the scopes of the reservation, as in its request
     * @param entryId the entry id of the reservation's request
     * @param reservedAtMillis the time the store recorded the reservation at ({@link
     *     Evaluation#nowMillis()}), or {@link #IN_DOUBT} for a cancel of a reservation whose store call
     *     timed out: the store may or may not have recorded it
     * @param estimate the amount of each unit the reservation charged
     * @param actual the amount of each unit used, or {@code null} to cancel; a unit it does not name
     *     stays at its estimate
     * @param nowMillis the time of settling in epoch milliseconds, or {@link StoreRequest#STORE_TIME}
     * @param lease the reservation's lease, released in the same atomic step (exactly once: releasing
     *     it again, or after it expired, frees nothing), or {@code null}
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if a time is out of range
     */
    public Settlement {
        scopes = List.copyOf(Objects.requireNonNull(scopes, "scopes must not be null"));
        Objects.requireNonNull(entryId, "entryId must not be null");
        Objects.requireNonNull(estimate, "estimate must not be null");
        if (scopes.isEmpty()) {
            throw new IllegalArgumentException("scopes must not be empty");
        }
        if (reservedAtMillis == IN_DOUBT) {
            if (actual != null) {
                throw new IllegalArgumentException("only a cancel may be in doubt (reservedAtMillis IN_DOUBT)");
            }
        } else if (reservedAtMillis < 0) {
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
     * Creates the settlement of a reservation of tokens alone.
     *
     * @param scopes the scopes of the reservation
     * @param entryId the entry id of the reservation's request
     * @param reservedAtMillis the time the store recorded the reservation at
     * @param estimatedTokens the tokens the reservation charged to token windows, at least 0
     * @param actualTokens the tokens used, at least 0, or {@link #CANCEL}
     * @param nowMillis the time of settling, or {@link StoreRequest#STORE_TIME}
     * @param lease the reservation's lease, or {@code null}
     * @throws IllegalArgumentException if a count is out of range
     */
    public Settlement(
            List<StoreRequest.Scope> scopes,
            String entryId,
            long reservedAtMillis,
            long estimatedTokens,
            long actualTokens,
            long nowMillis,
            StoreRequest.@Nullable Lease lease) {
        this(
                scopes,
                entryId,
                reservedAtMillis,
                tokens(estimatedTokens, "estimatedTokens"),
                actualTokens == CANCEL ? null : tokens(actualTokens, "actualTokens"),
                nowMillis,
                lease);
    }

    private static Amounts tokens(long tokens, String argument) {
        if (tokens < 0) {
            throw new IllegalArgumentException(argument + " must be at least 0"
                    + (argument.equals("actualTokens") ? ", or CANCEL" : "") + ", was " + tokens);
        }
        return tokens == 0 ? Amounts.none() : Amounts.tokens(tokens);
    }

    /**
     * Returns how long a store keeps the proof that it applied this settlement: {@link
     * #REPEAT_GUARD}, or the longest window of an amount when shorter (once the reservation has left
     * it, a repeated refund finds nothing to give back); 0 when the settlement touches no window of
     * an amount, whose settlement is idempotent as it is. A calendar window's length here is its
     * nominal one: its periods (a day less a clock change at the shortest) all outlast {@link #REPEAT_GUARD}, so the
     * guard is {@link #REPEAT_GUARD} whatever the period's real length (a reservation that leaves
     * sooner, made just before a period's end, is only guarded longer than it needs).
     *
     * @return the time in milliseconds
     */
    public long repeatGuardMillis() {
        long longest = 0;
        for (StoreRequest.Scope scope : scopes) {
            for (Window window : scope.windows()) {
                if (!window.countsRequests()) {
                    longest = Math.max(longest, window.lengthMillis());
                }
            }
        }
        return Math.min(longest, REPEAT_GUARD.toMillis());
    }

    /**
     * Tells whether this is a cancel of a reservation the store may never have recorded ({@link
     * #IN_DOUBT}).
     *
     * @return {@code true} when the store must find the entry before giving anything back
     */
    public boolean isInDoubt() {
        return reservedAtMillis == IN_DOUBT;
    }

    /**
     * Tells whether this settlement cancels the reservation.
     *
     * @return {@code true} for a cancel
     */
    public boolean isCancel() {
        return actual == null;
    }

    /**
     * Returns the tokens the reservation charged.
     *
     * @return the estimate's amount of tokens
     */
    public long estimatedTokens() {
        return estimate.get(Window.Unit.TOKENS);
    }

    /**
     * Returns the tokens used, as token windows settle to them.
     *
     * @return {@link #CANCEL} for a cancel, else the tokens token windows settle to
     */
    public long actualTokens() {
        Amounts used = actual;
        if (used == null) {
            return CANCEL;
        }
        return used.has(Window.Unit.TOKENS) ? used.get(Window.Unit.TOKENS) : estimatedTokens();
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
     * Returns what the reservation charged a window: 1 for a request window, the estimate's amount
     * of its unit for any other.
     *
     * @param window one of the reservation's windows
     * @return the weight recorded
     */
    public long estimateIn(Window window) {
        return window.countsRequests() ? 1 : estimate.get(window.unit());
    }

    /**
     * Returns what a window should hold for the reservation once settled: 0 on cancel, 1 for a
     * request window on commit, and on commit for any other window the actual amount of its unit,
     * or its estimate when {@link #actual()} does not name the unit.
     *
     * @param window one of the reservation's windows
     * @return the settled weight
     */
    public long targetIn(Window window) {
        Amounts used = actual;
        if (used == null) {
            return 0;
        }
        if (window.countsRequests()) {
            return 1;
        }
        return used.has(window.unit()) ? used.get(window.unit()) : estimate.get(window.unit());
    }
}
