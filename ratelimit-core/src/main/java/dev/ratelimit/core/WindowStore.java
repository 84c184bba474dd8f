package dev.ratelimit.core;

import dev.ratelimit.api.RateLimiterUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The port every storage backend implements: one atomic evaluation of all windows of one check.
 *
 * <p>For a {@link StoreRequest}, in one atomic step of the store (one round trip for a remote
 * store):
 *
 * <ol>
 *   <li>for each window in {@link StoreRequest#windows()} order (each scope's windows shortest
 *       first; a user check has one scope, its user's): drop the entries whose timestamp is at or before {@code
 *       now - window length}, then count what is left; if {@code count + permits > limit}, stop and
 *       return {@link Evaluation#rejected} for that window with the time until its oldest entry
 *       leaves it ({@code oldest + length - now}). Nothing is written anywhere and longer windows are
 *       not looked at;
 *   <li>only when every window has room, record the request ({@code permits} entries at {@code now},
 *       each unique even within one millisecond and across processes) in every window, set each
 *       window's expiry to its length plus one second, and return {@link Evaluation#allowed} with
 *       each window's count after recording and the time until its oldest entry leaves it.
 * </ol>
 *
 * <p>{@code now} is {@link StoreRequest#nowMillis()} when the request carries a time (an injected
 * clock), otherwise the store's own clock (for Redis: the server's {@code TIME}).
 *
 * <p>Each window's log belongs to its scope's subject and length: two requests that name the same
 * subject and window length share that log, whatever the limit. A store that cannot evaluate
 * several scopes in one atomic step (for Redis Cluster, scopes whose keys lie in different hash
 * slots) must reject such a request with {@link UnsupportedOperationException} rather than evaluate
 * it piecewise; the limiter sends one scope per check today.
 *
 * <p>Failures surface as {@link RateLimiterUnavailableException} (thrown by {@link #evaluate}, or
 * completing the stage of {@link #evaluateAsync} exceptionally); no driver exception type crosses
 * this port. The blocking call and the stage must both finish within the store's own timeout: the
 * limiter's circuit breaker does not time calls out. Implementations are thread-safe. The
 * conformance kit in {@code ratelimit-test-kit} is the executable form of this contract.
 */
public interface WindowStore {

    /**
     * Evaluates a request, blocking until the store answers or its timeout passes.
     *
     * @param request the windows to evaluate, shortest first
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
     * @param request the windows to evaluate, shortest first
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
}
