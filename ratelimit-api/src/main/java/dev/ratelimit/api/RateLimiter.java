package dev.ratelimit.api;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * A sliding-window rate limiter: every check either records one request for a user in all of its
 * windows or, if any window is full, records nothing.
 *
 * <p>Windows are evaluated shortest first and the check is all or nothing: a request rejected by
 * the day window is not charged to the minute window. A {@linkplain #reserve reservation} also
 * charges estimated {@link Amounts} (tokens, spend, any {@link Window.Unit}) to the windows of
 * their units and to {@link SharedBudget}s in the same atomic step, and is settled to the real
 * amounts later. A check is a reservation of zero tokens that is never
 * settled. Implementations are thread-safe.
 *
 * <p>Arguments are validated before any store I/O: a {@code null} argument raises {@link
 * NullPointerException} and an invalid one {@link IllegalArgumentException}, each naming the
 * argument. When the backing store cannot be reached and the limiter is configured to fail closed,
 * checks raise {@link RateLimiterUnavailableException}.
 */
public interface RateLimiter {

    /**
     * Checks one request of {@code userId} against a single window of {@code limit} requests per
     * {@code window}.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param limit the number of requests allowed within the window, at least 1
     * @param window the window length, a whole number of seconds, at least one second
     * @return the decision; never {@code null}
     */
    Decision check(String userId, long limit, Duration window);

    /**
     * Checks one request of {@code userId} against several windows at once, shortest first, all or
     * nothing.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param windows the windows to satisfy, in any order; not empty, no two of the same length
     * @return the decision; on rejection {@link Decision#window()} is the window that rejected
     */
    Decision check(String userId, List<Window> windows);

    /**
     * Checks one request of {@code userId} against the windows of {@code tier}.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @return the decision
     */
    Decision check(String userId, Tier tier);

    /**
     * Checks one request without blocking the caller; see {@link #check(String, long, Duration)}.
     *
     * <p>Invalid arguments are rejected by throwing from this method, before a stage is returned.
     *
     * @param userId the identity whose budget is charged
     * @param limit the number of requests allowed within the window
     * @param window the window length
     * @return a stage completed with the decision, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    CompletionStage<Decision> checkAsync(String userId, long limit, Duration window);

    /**
     * Checks one request against several windows without blocking the caller; see {@link
     * #check(String, List)}.
     *
     * @param userId the identity whose budget is charged
     * @param windows the windows to satisfy
     * @return a stage completed with the decision, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    CompletionStage<Decision> checkAsync(String userId, List<Window> windows);

    /**
     * Checks one request against the windows of {@code tier} without blocking the caller.
     *
     * @param userId the identity whose budget is charged
     * @param tier the tier whose windows apply
     * @return a stage completed with the decision
     */
    default CompletionStage<Decision> checkAsync(String userId, Tier tier) {
        Checks.notNull(tier, "tier");
        return checkAsync(userId, tier.windows());
    }

    /**
     * Reserves one request and {@code estimatedTokens} tokens for {@code userId}: 1 is charged to
     * every request window of the tier and {@code estimatedTokens} to every token window, shortest
     * first, all or nothing, in one atomic store step.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @param estimatedTokens the tokens the request is expected to use, at least 0
     * @return the reservation; settle it with {@link Reservation#commit} or {@link Reservation#cancel}
     *     when allowed
     */
    default Reservation reserve(String userId, Tier tier, long estimatedTokens) {
        return reserve(userId, tier, estimatedTokens, List.of());
    }

    /**
     * Reserves one request and {@code estimatedTokens} tokens for {@code userId} and in every shared
     * budget at once: all of the user's windows and every budget's windows admit the request, or
     * nothing is charged anywhere.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @param estimatedTokens the tokens the request is expected to use, at least 0
     * @param shared budgets shared with other users, such as an upstream model's caps; distinct names
     * @return the reservation
     */
    default Reservation reserve(String userId, Tier tier, long estimatedTokens, List<SharedBudget> shared) {
        return reserve(userId, tier, Checks.tokens(estimatedTokens, "estimatedTokens"), shared);
    }

    /**
     * Reserves one request and an amount of each unit for {@code userId} and in every shared budget
     * at once: 1 is charged to every request window, and to every other window the estimate's amount
     * of its unit (0 for a unit the estimate does not name), shortest first, all or nothing across
     * the user's windows and every budget's, in one atomic store step. Tokens and spend are reserved
     * together this way: {@code Amounts.tokens(1_200).and(Unit.USD_MICROS, 4_500)}.
     *
     * <p>A window whose limit is below the estimate's amount of its unit can never admit it: the
     * decision is {@link Decision#tooLarge()} and names that window.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @param estimate the amount of each unit the request is expected to use
     * @param shared budgets shared with other users, such as an upstream model's caps; distinct names
     * @return the reservation; settle it with {@link Reservation#commit(Amounts)} or {@link
     *     Reservation#cancel} when allowed
     */
    Reservation reserve(String userId, Tier tier, Amounts estimate, List<SharedBudget> shared);

    /**
     * Reserves as {@link #reserve(String, Tier, long, List)} does and takes one of the user's
     * concurrency slots in the same atomic store step: see {@link Concurrency}. When the user
     * already holds {@code concurrency.maxConcurrent()} reservations, nothing is charged and the
     * reservation says {@link Reservation#concurrencyLimited()}; settling an admitted one frees
     * its slot.
     *
     * <p>The default throws {@link UnsupportedOperationException}.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @param estimatedTokens the tokens the request is expected to use, at least 0
     * @param shared budgets shared with other users; distinct names
     * @param concurrency the user's concurrency cap
     * @return the reservation
     */
    default Reservation reserve(
            String userId, Tier tier, long estimatedTokens, List<SharedBudget> shared, Concurrency concurrency) {
        return reserve(userId, tier, Checks.tokens(estimatedTokens, "estimatedTokens"), shared, concurrency);
    }

    /**
     * Reserves as {@link #reserve(String, Tier, Amounts, List)} does and takes one of the user's
     * concurrency slots in the same atomic store step, as {@link #reserve(String, Tier, long, List,
     * Concurrency)} describes.
     *
     * <p>The default throws {@link UnsupportedOperationException}.
     *
     * @param userId the identity whose budget is charged; any non-empty string
     * @param tier the tier whose windows apply
     * @param estimate the amount of each unit the request is expected to use
     * @param shared budgets shared with other users; distinct names
     * @param concurrency the user's concurrency cap
     * @return the reservation
     */
    default Reservation reserve(
            String userId, Tier tier, Amounts estimate, List<SharedBudget> shared, Concurrency concurrency) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no concurrency caps");
    }

    /**
     * Returns how many of the user's concurrency slots are held now: reservations made with a
     * {@link Concurrency} cap and not settled, whose lease has not passed.
     *
     * <p>The default throws {@link UnsupportedOperationException}.
     *
     * @param userId the identity whose slots to count
     * @return the slots held; 0 when the limiter is disabled
     * @throws RateLimiterUnavailableException if the store cannot be reached
     */
    default long inFlight(String userId) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no concurrency caps");
    }

    /**
     * Returns every lease this limiter holds on {@linkplain SharedBudget#leased leased} budgets: what
     * it did not use goes back to the store at once, available to other instances; the next request
     * naming such a budget takes a new lease. For a graceful shutdown, before {@link
     * #awaitSettlements}; a limiter that stops without it holds its slices until their entries leave
     * the budget's windows.
     *
     * <p>The default does nothing: a limiter that leases nothing holds nothing.
     */
    default void returnLeases() {}

    /**
     * Waits until every settlement the store could not take when it was made (queued to be retried,
     * see {@link Reservation}) has been applied or given up, or the timeout passes: for a graceful
     * shutdown, before the store is closed.
     *
     * <p>The default returns {@code true} at once: a limiter that queues nothing has nothing to wait
     * for.
     *
     * @param timeout the longest time to wait
     * @return {@code true} when no settlement is left waiting
     * @throws InterruptedException if the waiting thread is interrupted
     * @throws NullPointerException if {@code timeout} is {@code null}
     */
    default boolean awaitSettlements(Duration timeout) throws InterruptedException {
        Checks.notNull(timeout, "timeout");
        return true;
    }

    /**
     * Reserves without blocking the caller; see {@link #reserve(String, Tier, long)}.
     *
     * <p>Invalid arguments are rejected by throwing from this method, before a stage is returned.
     *
     * @param userId the identity whose budget is charged
     * @param tier the tier whose windows apply
     * @param estimatedTokens the tokens the request is expected to use, at least 0
     * @return a stage completed with the reservation, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    default CompletionStage<Reservation> reserveAsync(String userId, Tier tier, long estimatedTokens) {
        return reserveAsync(userId, tier, estimatedTokens, List.of());
    }

    /**
     * Reserves in the user's windows and shared budgets without blocking the caller; see {@link
     * #reserve(String, Tier, long, List)}.
     *
     * <p>Invalid arguments are rejected by throwing from this method, before a stage is returned.
     *
     * @param userId the identity whose budget is charged
     * @param tier the tier whose windows apply
     * @param estimatedTokens the tokens the request is expected to use, at least 0
     * @param shared budgets shared with other users; distinct names
     * @return a stage completed with the reservation, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    default CompletionStage<Reservation> reserveAsync(
            String userId, Tier tier, long estimatedTokens, List<SharedBudget> shared) {
        return reserveAsync(userId, tier, Checks.tokens(estimatedTokens, "estimatedTokens"), shared);
    }

    /**
     * Reserves an amount of each unit in the user's windows and shared budgets without blocking the
     * caller; see {@link #reserve(String, Tier, Amounts, List)}.
     *
     * <p>Invalid arguments are rejected by throwing from this method, before a stage is returned.
     *
     * @param userId the identity whose budget is charged
     * @param tier the tier whose windows apply
     * @param estimate the amount of each unit the request is expected to use
     * @param shared budgets shared with other users; distinct names
     * @return a stage completed with the reservation, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    CompletionStage<Reservation> reserveAsync(String userId, Tier tier, Amounts estimate, List<SharedBudget> shared);

    /**
     * Reserves as {@link #reserveAsync(String, Tier, Amounts, List)} does and takes one of the
     * user's concurrency slots in the same atomic store step, as {@link #reserve(String, Tier,
     * Amounts, List, Concurrency)} describes, without blocking the caller.
     *
     * <p>Invalid arguments are rejected by throwing from this method, before a stage is returned.
     * The default throws {@link UnsupportedOperationException}.
     *
     * @param userId the identity whose budget is charged
     * @param tier the tier whose windows apply
     * @param estimate the amount of each unit the request is expected to use
     * @param shared budgets shared with other users; distinct names
     * @param concurrency the user's concurrency cap
     * @return a stage completed with the reservation, or exceptionally with {@link
     *     RateLimiterUnavailableException}
     */
    default CompletionStage<Reservation> reserveAsync(
            String userId, Tier tier, Amounts estimate, List<SharedBudget> shared, Concurrency concurrency) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no concurrency caps");
    }

    /**
     * Returns the state of each of a user's windows without charging anything: what is used, what
     * remains, and when the oldest entry leaves, for dashboards and usage endpoints.
     *
     * @param userId the identity whose windows to look at; any non-empty string
     * @param tier the tier whose windows to look at
     * @return each window's usage, shortest first; empty when the limiter is disabled
     * @throws RateLimiterUnavailableException if the store cannot be reached (whether the limiter
     *     fails open or closed: there is no decision to let through)
     */
    List<Decision.Usage> usage(String userId, Tier tier);

    /**
     * Returns the state of each window of a shared budget without charging anything.
     *
     * @param budget the shared budget
     * @return each window's usage, shortest first, each naming the budget; empty when disabled
     * @throws RateLimiterUnavailableException if the store cannot be reached
     */
    List<Decision.Usage> usage(SharedBudget budget);

    /**
     * Rebuilds a reservation from its {@link Reservation#receipt() receipt}, to settle it here: its
     * {@link Reservation#commit} or {@link Reservation#cancel} settles the original's entries in the
     * store as the original would have (and is queued and retried the same way). The store applies a
     * settlement of an entry once (within {@code Settlement.REPEAT_GUARD}, a commit after a cancel
     * changing nothing), so the original and any number of rebuilt copies settled at about the same
     * time settle it once; a caller that settles much later keeps its own record of whether it did.
     * The rebuilt reservation's decision is an allowed one of its first window; it holds no slot.
     *
     * <p>The default throws {@link UnsupportedOperationException}.
     *
     * @param receipt what {@link Reservation#receipt()} gave
     * @return the reservation, not settled yet
     * @throws IllegalArgumentException when {@code receipt} is not a receipt this limiter can read
     * @throws UnsupportedOperationException when the limiter cannot rebuild reservations
     */
    default Reservation restore(String receipt) {
        throw new UnsupportedOperationException("this limiter cannot rebuild a reservation from a receipt");
    }
}
