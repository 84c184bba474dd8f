package dev.ratelimit.api;

import java.util.concurrent.CompletionStage;

/**
 * A request admitted with an estimate of its tokens, to be settled once the real count is known.
 *
 * <pre>{@code
 * Reservation r = limiter.reserve(userId, tier, estimatedTokens);
 * if (r.decision().allowed()) {
 *     Completion answer = model.call(...);
 *     r.commit(answer.usage().totalTokens());   // or r.cancel() if the upstream did no work
 * }
 * }</pre>
 *
 * <p>Settling happens at most once: the first {@link #commit} or {@link #cancel} takes effect and
 * later calls do nothing. A reservation never settled keeps its estimate. Settling a rejected,
 * degraded or disabled reservation does nothing. A settlement the store cannot take at once (it
 * fails, times out, or the limiter's circuit breaker is open) is queued in memory and retried until
 * the store takes it; stores apply a settlement once, so a retry never counts twice. It is given up
 * (counted in the {@code ratelimit.settle.failures} metric and logged) only when retrying can no
 * longer change anything, or the queue is full; then the estimate stays until its window passes.
 * Nothing is thrown: the returned stage always completes normally, once the settlement is applied
 * or queued. Implementations are thread-safe.
 */
public interface Reservation {

    /**
     * Returns the decision taken when the reservation was made.
     *
     * @return the decision
     */
    Decision decision();

    /**
     * Settles the token windows to the tokens actually used: a smaller count gives the difference
     * back where the reservation's entry is still in the window, a larger one charges the overrun at
     * the time of settling (never rejected: the work is done; it may push a window over its limit,
     * and later requests wait for it to drain). Request windows keep the request; windows of other
     * units keep their estimate ({@link #commit(Amounts)} settles them).
     *
     * @param actualTokens the tokens used, at least 0
     * @return a stage completed once the store has applied the settlement or it is queued for retry
     * @throws IllegalArgumentException if {@code actualTokens} is negative
     */
    default CompletionStage<Void> commit(long actualTokens) {
        return commit(Checks.tokens(actualTokens, "actualTokens"));
    }

    /**
     * Settles every unit the actual amounts name to its actual amount, as {@link #commit(long)}
     * does for tokens: a smaller amount gives the difference back where the reservation's entry is
     * still in the window, a larger one charges the overrun at the time of settling (never
     * rejected). A unit the reservation charged that {@code actual} does not name keeps its
     * estimate; request windows keep the request.
     *
     * @param actual the amount of each unit used
     * @return a stage completed once the store has applied the settlement or it is queued for retry
     * @throws NullPointerException if {@code actual} is {@code null}
     */
    CompletionStage<Void> commit(Amounts actual);

    /**
     * Gives back the request and every amount it reserved, for work the upstream never did.
     *
     * @return a stage completed once the store has applied the refund or the attempt failed
     */
    CompletionStage<Void> cancel();

    /**
     * Tells whether the reservation was refused by its {@link Concurrency} cap: every window had
     * room, but the user already held the most slots allowed. Nothing was charged; {@link
     * #decision()} is then not allowed, names the user's shortest window with a zero retry, and its
     * usage holds every window as it stood (without this request).
     *
     * @return {@code true} when refused by the concurrency cap; {@code false} by default
     */
    default boolean concurrencyLimited() {
        return false;
    }

    /**
     * Renews the reservation's concurrency slot for another lease, for work that runs longer than
     * the lease (a long stream renews every third of it). Does nothing for a reservation without a
     * slot.
     *
     * @return a stage completed with {@code true} while the slot is held (and now renewed), {@code
     *     false} once it was released or lost; {@code true} by default
     */
    default CompletionStage<Boolean> renew() {
        return java.util.concurrent.CompletableFuture.completedFuture(true);
    }

    /**
     * Returns this reservation's receipt: a text that {@link RateLimiter#restore(String)} turns back
     * into a reservation settling the same entries in the store, in another process on the same store
     * or much later (a batch job settled hours after it was admitted, by whichever instance learns
     * that it ended). The receipt names the windows and budgets the reservation was made in and its
     * estimate; not its concurrency slot, which lapses with its lease.
     *
     * @return the receipt; empty for a reservation that holds nothing in the store (rejected,
     *     degraded, disabled) and by default
     */
    default java.util.Optional<String> receipt() {
        return java.util.Optional.empty();
    }

    /**
     * Tells whether {@link #commit} or {@link #cancel} has been called.
     *
     * @return {@code true} once settled
     */
    boolean isSettled();
}
