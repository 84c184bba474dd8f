package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.RateLimiterUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The port every storage backend implements: one atomic evaluation of all windows of one request,
 * and the settlement of a reservation afterwards.
 *
 * <p>For a {@link StoreRequest}, in one atomic step of the store (one round trip for a remote
 * store), at {@code now}:
 *
 * <ol>
 *   <li>for each window in {@link StoreRequest#windows()} order: drop the entries recorded at or
 *       before {@code now - window length}, then sum the weights of what is left ({@code used});
 *   <li>the first window that cannot take the request decides, as {@link Evaluation} states: too
 *       large, or rejected with the retry delay given there. Then nothing is recorded anywhere;
 *   <li>only when every window has room, record the request in every window under its {@link
 *       StoreRequest#entryId()} (weight 1 in request windows, {@link StoreRequest#tokens()} in
 *       token windows; nothing for a weight of 0), keep each window's state for one second after
 *       its last entry leaves, and return {@link Evaluation#allowed}.
 * </ol>
 *
 * <p>In every answer each window's {@code used} and the time until its oldest entry leaves it are
 * reported, and the {@code now} the store used ({@link StoreRequest#nowMillis()} when the request
 * carries a time, otherwise the store's own clock: for Redis, the server's {@code TIME}).
 *
 * <p>A window with a {@linkplain dev.ratelimit.api.Window#precision() precision} records an entry as
 * if at the end of its precision step ({@code (floor(t / step) + 1) * step}) and may keep the
 * entries of one step as one: it never admits more than the exact window would and gives capacity
 * back at most one step late.
 *
 * <p>A {@linkplain dev.ratelimit.api.Window#isCalendar() calendar window} is exact and counts the
 * entries of the calendar period that holds {@code now}: from {@code start =
 * window.calendar().startMillis(now)} to {@code end = window.calendar().endMillis(now)}, both
 * computed in Java ({@code java.time} with the window's zone). In step 1 it drops the entries
 * recorded before {@code start} (instead of at or before {@code now - length}); every entry it holds
 * leaves at {@code end}, which is where its retry delay and the time until its oldest entry leaves
 * point, and its state is kept until one second after {@code end}. A settlement counts in the
 * period of its reservation: its time is the reservation's ({@link Settlement#reservedAtMillis()}),
 * an overrun included, so a reservation of an earlier period changes nothing once that period has
 * ended.
 *
 * <p>Each window's log belongs to its scope (a user, or a shared budget: never the same log even
 * for equal names), its length, its unit, its precision, whether it is a calendar window and whether it is
 * {@linkplain dev.ratelimit.api.Window#inShadow() in shadow}: two requests that name the same scope
 * and such a window share that log, whatever the limit, and a shadow window never shares the log
 * of its enforced twin. A store evaluates shadow windows as it does any other (the limiter sends
 * them in requests of their own and gives them their meaning). A store that cannot evaluate several
 * scopes in one atomic step (Redis Cluster: their keys lie in different hash slots) says so through
 * {@link #atomicAcrossScopes()}; the limiter then sends it one scope at a time and compensates.
 *
 * <p>A request may also take a concurrency {@link StoreRequest.Lease lease} in the same atomic
 * step, released by its settlement: see there. A {@link BudgetLease} is another thing: a slice of a
 * shared budget that one instance takes ({@link #takeLease}), spends locally and returns ({@link
 * #returnLease}), or returns with the next one's take in one step ({@link #exchangeLease}).
 *
 * <p>Failures surface as {@link RateLimiterUnavailableException} (thrown, or completing the stage
 * exceptionally); no driver exception type crosses this port. Every call must finish within the
 * store's own timeout: the limiter's circuit breaker does not time calls out. Implementations are
 * thread-safe. The conformance kit in {@code ratelimit-test-kit} is the executable form of this
 * contract.
 */
public interface WindowStore {

    /**
     * Evaluates a request, blocking until the store answers or its timeout passes.
     *
     * @param request the request
     * @return the evaluation
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    Evaluation evaluate(StoreRequest request);

    /**
     * Evaluates a request without blocking the caller.
     *
     * <p>The default completes synchronously through {@link #evaluate}; non-blocking stores override
     * it.
     *
     * @param request the request
     * @return a stage completed with the evaluation, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    default CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        try {
            return CompletableFuture.completedFuture(evaluate(request));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Reports the state of every window of a request without recording anything: what {@link
     * #evaluate} would report for an allowed request, minus the request itself. The request's
     * {@code tokens} and entry id are ignored.
     *
     * @param request the windows to look at
     * @return an allowed evaluation holding each window's {@code used} and reset time
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    Evaluation peek(StoreRequest request);

    /**
     * Applies a settlement as {@link Settlement} describes, in one atomic step, blocking until the
     * store answers or its timeout passes. Settling never rejects.
     *
     * @param settlement the settlement
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    void settle(Settlement settlement);

    /**
     * Applies a settlement without blocking the caller.
     *
     * <p>The default completes synchronously through {@link #settle}; non-blocking stores override
     * it.
     *
     * @param settlement the settlement
     * @return a stage completed when applied, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    default CompletionStage<Void> settleAsync(Settlement settlement) {
        try {
            settle(settlement);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Extends a lease still held to {@code now + lease.ttlMillis()}, for holders that run longer
     * than the lease (a long stream renews it every third of its ttl). A lease released or expired
     * is not brought back.
     *
     * <p>The default throws {@link UnsupportedOperationException}: a store without leases refuses
     * requests that carry one in {@link #evaluate} the same way.
     *
     * @param lease the lease
     * @param entryId the entry id of the request that took it
     * @param nowMillis the time of renewal, or {@link StoreRequest#STORE_TIME}
     * @return {@code true} when the lease was still held and is renewed
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    default boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " holds no leases");
    }

    /**
     * Returns how many leases the lease's scope holds at {@code now}: those released or past their
     * time are not counted.
     *
     * @param lease the lease naming the scope (its cap and ttl are ignored)
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @return the leases held
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    default long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " holds no leases");
    }

    /**
     * Takes a {@link BudgetLease} in one atomic step at {@code now}: for each window of the lease's
     * budget, in order, drop what has left it, then the first window that cannot take the lease's
     * weight there ({@link BudgetLease#weightIn}; room for at least 1 as for any request) decides, as
     * in {@link #evaluate} (too large, or rejected with its retry delay), and nothing is recorded.
     * Only when every window has room is the lease recorded in every window under its entry id,
     * <em>stamped at {@link BudgetLease#stampMillis} of now</em>: it counts from now until that stamp
     * plus the window's length, and the budget's state is kept at least that long.
     *
     * <p>The default throws {@link UnsupportedOperationException}: a store without budget leases
     * leaves the limiter to reserve leased budgets per request.
     *
     * @param lease the lease
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @return the evaluation, indices into the budget's windows; its {@code now} is the time the
     *     lease's stamp counts from
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    default Evaluation takeLease(BudgetLease lease, long nowMillis) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " takes no budget leases");
    }

    /**
     * Ends a {@link BudgetLease} taken at {@code stampMillis - durationMillis}: in one atomic step,
     * its entry keeps {@code requestsUsed} in request windows and {@code used} of each other unit
     * (never more than the lease's weight there: what exceeds it is ignored) at its stamp, and the
     * rest is given back at once, where the entry is still in the window. Returning is idempotent:
     * returning the same lease again changes nothing. Overruns are not charged here: a holder
     * charges what exceeds its lease with a {@link Settlement} of an entry of its own.
     *
     * @param lease the lease, as taken
     * @param stampMillis its stamp: {@link BudgetLease#stampMillis} of the {@link Evaluation#nowMillis()}
     *     that took it; or {@link Settlement#IN_DOUBT} when the call taking it failed and may or may not
     *     have run: then the lease is given back whole where an exact window holds its entry, and
     *     nothing happens where none does
     * @param requestsUsed the requests the holder admitted from it
     * @param used the amount of each other unit the holder spent from it
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    default void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " takes no budget leases");
    }

    /**
     * Returns one {@link BudgetLease} and takes the next on the same budget in one atomic step at
     * {@code now}: exactly {@link #returnLease returnLease(returned, stampMillis, requestsUsed, used,
     * now)} followed by {@link #takeLease takeLease(taking, now)}, with no other call between them, so
     * what the returned lease did not use is already free when the next one is taken. The return
     * applies whether or not the take is refused, and stays idempotent: when {@code returned} was
     * returned before (a retry of a call whose reply was lost), only the take happens. A holder that
     * renews its lease this way touches the budget's keys once per lease instead of twice.
     *
     * <p>The default makes the two calls one after the other, which keeps every guarantee (a return
     * never makes room that is not free, a take never takes room that is not there) but costs two
     * round trips; stores that can do both in one step override it.
     *
     * @param returned the lease ending, as taken
     * @param stampMillis its stamp ({@link BudgetLease#stampMillis} of the {@link
     *     Evaluation#nowMillis()} that took it); never {@link Settlement#IN_DOUBT}: a lease whose
     *     taking is in doubt is returned by {@link #returnLease}
     * @param requestsUsed the requests the holder admitted from it
     * @param used the amount of each other unit the holder spent from it
     * @param taking the next lease, on the same budget
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @return the evaluation of the take, as {@link #takeLease} returns it
     * @throws IllegalArgumentException if the leases are of different budgets, share an entry id, or
     *     the stamp is {@link Settlement#IN_DOUBT}
     * @throws RateLimiterUnavailableException if the store cannot be reached or fails
     */
    default Evaluation exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis) {
        BudgetLease.checkExchange(returned, stampMillis, taking);
        returnLease(returned, stampMillis, requestsUsed, used, nowMillis);
        return takeLease(taking, nowMillis);
    }

    /**
     * Tells whether this store evaluates a request of several scopes in one atomic step. When it
     * does not, the limiter sends it requests of one scope only, and the store refuses a request of
     * several scopes with {@link UnsupportedOperationException} rather than evaluate it piecewise.
     *
     * @return {@code true} by default
     */
    default boolean atomicAcrossScopes() {
        return true;
    }
}
