package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.FailurePolicy;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Window;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Runs store calls behind a circuit breaker and applies the fail-open or fail-closed policy.
 *
 * <p>An open breaker rejects the call before the store is touched, so a dead Redis costs nothing
 * per request once the breaker has seen a handful of failures. The breaker never times calls out:
 * the store's own (driver) timeout bounds each call.
 */
final class StoreGuard {

    private static final System.Logger LOG = System.getLogger(SlidingWindowRateLimiter.class.getName());
    private static final Duration WARN_INTERVAL = Duration.ofSeconds(10);
    private static final Clock WALL_CLOCK = Clock.systemUTC();

    private final WindowStore store;
    private final String name;
    private final boolean failOpen;
    private final Map<Window.Unit, FailurePolicy> unitPolicies;
    private final LocalShares shares;
    private final CircuitBreaker breaker;
    private final Recorder metrics;
    private final @Nullable RejectionCache rejections;
    private final SettleQueue settlements;
    private final ThrottledWarning warning = new ThrottledWarning(LOG, WARN_INTERVAL);

    StoreGuard(
            WindowStore store,
            String name,
            boolean failOpen,
            Map<Window.Unit, FailurePolicy> unitPolicies,
            LocalShares shares,
            CircuitBreakerConfig config,
            Recorder metrics,
            @Nullable RejectionCache rejections) {
        this.store = store;
        this.rejections = rejections;
        this.name = name;
        this.failOpen = failOpen;
        this.unitPolicies = Map.copyOf(unitPolicies);
        this.shares = shares;
        this.metrics = metrics;
        this.breaker = CircuitBreaker.of("ratelimit-" + name, config);
        this.settlements = new SettleQueue(store, name, metrics, SettleQueue.DEFAULT_CAPACITY, System::nanoTime);
        metrics.bind(settlements);
        metrics.bind(breaker);
    }

    static CircuitBreakerConfig defaultConfig() {
        return CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(10)
                .minimumNumberOfCalls(5)
                .failureRateThreshold(50)
                .slowCallDurationThreshold(Duration.ofSeconds(1))
                .slowCallRateThreshold(50)
                .waitDurationInOpenState(Duration.ofMillis(500))
                .permittedNumberOfCallsInHalfOpenState(3)
                .recordExceptions(RuntimeException.class)
                .build();
    }

    WindowStore store() {
        return store;
    }

    /**
     * Tells whether the breaker is open: the store is taken for down and calls are refused before
     * they are made.
     */
    boolean isOpen() {
        return breaker.getState() == CircuitBreaker.State.OPEN
                || breaker.getState() == CircuitBreaker.State.FORCED_OPEN;
    }

    /**
     * Evaluates through the breaker.
     *
     * @throws Unavailable when the breaker refuses the call or the store fails (already counted)
     */
    Evaluation evaluate(StoreRequest request) {
        if (!breaker.tryAcquirePermission()) {
            throw unavailable("circuit breaker is open", null);
        }
        long start = breaker.getCurrentTimestamp();
        Evaluation evaluation;
        try {
            evaluation = checked(request, store.evaluate(request));
        } catch (RuntimeException e) {
            breaker.onError(breaker.getCurrentTimestamp() - start, breaker.getTimestampUnit(), e);
            throw unavailable("store failed", e);
        }
        succeeded(breaker.getCurrentTimestamp() - start);
        metrics.storeHealthy();
        return evaluation;
    }

    /** Evaluates through the breaker without blocking; the stage fails with {@link Unavailable}. */
    CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        if (!breaker.tryAcquirePermission()) {
            return CompletableFuture.failedFuture(unavailable("circuit breaker is open", null));
        }
        long start = breaker.getCurrentTimestamp();
        CompletionStage<Evaluation> stage;
        try {
            stage = store.evaluateAsync(request);
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Evaluation> result = new CompletableFuture<>();
        stage.whenComplete((evaluation, failure) -> {
            long elapsed = breaker.getCurrentTimestamp() - start;
            Throwable cause = failure == null ? null : unwrap(failure);
            if (cause == null) {
                try {
                    Evaluation valid = checked(request, evaluation);
                    succeeded(elapsed);
                    metrics.storeHealthy();
                    result.complete(valid);
                    return;
                } catch (RuntimeException e) {
                    cause = e;
                }
            }
            breaker.onError(elapsed, breaker.getTimestampUnit(), cause);
            result.completeExceptionally(unavailable("store failed", cause));
        });
        return result;
    }

    /**
     * Peeks through the breaker.
     *
     * @throws RateLimiterUnavailableException when the breaker refuses the call or the store fails
     */
    Evaluation peek(StoreRequest request) {
        if (!breaker.tryAcquirePermission()) {
            throw new RateLimiterUnavailableException("Rate limit store unavailable (circuit breaker is open)");
        }
        long start = breaker.getCurrentTimestamp();
        Evaluation evaluation;
        try {
            evaluation = checked(request, store.peek(request));
        } catch (RuntimeException e) {
            breaker.onError(breaker.getCurrentTimestamp() - start, breaker.getTimestampUnit(), e);
            metrics.storeFailure("error", failOpen);
            throw e instanceof RateLimiterUnavailableException unavailable
                    ? unavailable
                    : new RateLimiterUnavailableException("Rate limit store unavailable: " + e, e);
        }
        succeeded(breaker.getCurrentTimestamp() - start);
        metrics.storeHealthy();
        return evaluation;
    }

    /**
     * Settles through the breaker; never fails: a settlement the store does not take (it fails, or
     * the breaker is open) is queued and retried until the store takes it ({@link SettleQueue}),
     * and the stage completes normally once it is applied or queued.
     */
    CompletionStage<Void> settle(Settlement settlement) {
        if (!breaker.tryAcquirePermission()) {
            metrics.settleDeferred("circuit_open");
            settlements.add(settlement);
            forgetRejections(settlement);
            return CompletableFuture.completedFuture(null);
        }
        long start = breaker.getCurrentTimestamp();
        CompletionStage<Void> stage;
        try {
            stage = store.settleAsync(settlement);
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Void> result = new CompletableFuture<>();
        stage.whenComplete((ignored, failure) -> {
            long elapsed = breaker.getCurrentTimestamp() - start;
            if (failure == null) {
                succeeded(elapsed);
            } else {
                Throwable cause = unwrap(failure);
                breaker.onError(elapsed, breaker.getTimestampUnit(), cause);
                metrics.settleDeferred("error");
                warn("settling failed, queued to be retried", cause);
                settlements.add(settlement);
            }
            forgetRejections(settlement);
            result.complete(null);
        });
        return result;
    }

    /**
     * Counts a store call that answered toward the breaker, and tells the settlements waiting out a
     * backoff that the store answers again, so they are retried now rather than up to 2 s later.
     */
    private void succeeded(long elapsed) {
        breaker.onSuccess(elapsed, breaker.getTimestampUnit());
        settlements.storeAnswered();
    }

    private void forgetRejections(Settlement settlement) {
        if (rejections != null && settlement.isCancel()) {
            // the refund may have made room: cached rejections of these scopes no longer hold
            rejections.cancelled(settlement.scopes());
        }
    }

    /** Waits until every queued settlement has been applied or given up, or the timeout passes. */
    boolean awaitSettlements(Duration timeout) throws InterruptedException {
        return settlements.awaitEmpty(timeout);
    }

    /**
     * Renews a lease; the stage completes with the store's answer, or exceptionally with {@link
     * RateLimiterUnavailableException} when the store fails (counted like any store failure).
     */
    CompletionStage<Boolean> renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        try {
            return CompletableFuture.completedFuture(store.renewLease(lease, entryId, nowMillis));
        } catch (RuntimeException e) {
            metrics.storeFailure("error", failOpen);
            warn("renewing a lease failed", e);
            return CompletableFuture.failedFuture(
                    e instanceof RateLimiterUnavailableException
                            ? e
                            : new RateLimiterUnavailableException("Rate limit store unavailable: " + e, e));
        }
    }

    /**
     * Makes a budget lease's store call ({@link WindowStore#takeLease}, {@link
     * WindowStore#exchangeLease}, {@link WindowStore#returnLease}) through the breaker: refused while
     * it is open, and its outcome counted toward the breaker's state and the store's health meters
     * like a check's. No failure policy applies: the limiter reserves the budget directly instead.
     *
     * @throws RuntimeException the store's failure as it threw it (so that {@link #mayHaveRun} can
     *     read it), or {@link Unavailable} when the breaker refuses the call
     */
    <T> T lease(Supplier<T> call) {
        if (!breaker.tryAcquirePermission()) {
            metrics.storeFailure("circuit_open", false);
            throw new Unavailable("circuit breaker is open", null);
        }
        long start = breaker.getCurrentTimestamp();
        T result;
        try {
            result = call.get();
        } catch (RuntimeException e) {
            breaker.onError(breaker.getCurrentTimestamp() - start, breaker.getTimestampUnit(), e);
            metrics.storeFailure("error", false);
            throw e;
        }
        succeeded(breaker.getCurrentTimestamp() - start);
        metrics.storeHealthy();
        return result;
    }

    /**
     * Counts the leases of a scope.
     *
     * @throws RateLimiterUnavailableException when the store fails
     */
    long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        try {
            return store.leasesHeld(lease, nowMillis);
        } catch (RateLimiterUnavailableException | UnsupportedOperationException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new RateLimiterUnavailableException("Rate limit store unavailable: " + e, e);
        }
    }

    /**
     * Applies each window's failure policy: {@link RateLimiterUnavailableException} when any window
     * fails closed; otherwise the windows that decide locally are checked against this instance's
     * share (a rejection when one has no room), and the request passes degraded, naming the windows
     * that were not checked.
     *
     * @param nowMillis the limiter's time, or {@link StoreRequest#STORE_TIME}: the local shares then
     *     count sliding windows on the monotonic clock (they only measure how long their entries
     *     have been held) and calendar windows on the wall clock (whose dates name the periods)
     * @param named the window a degraded decision names: the user's shortest
     */
    Decision onUnavailable(StoreRequest request, Unavailable failure, long nowMillis, Window named) {
        List<Window> unchecked = new ArrayList<>();
        List<LocalShares.Part> local = new ArrayList<>();
        for (StoreRequest.Scope scope : request.scopes()) {
            for (Window window : scope.windows()) {
                switch (policy(window)) {
                    case CLOSED -> throw closed(failure);
                    case OPEN -> unchecked.add(window);
                    case LOCAL ->
                        local.add(new LocalShares.Part(
                                (scope.shared() ? "shared:" : "user:")
                                        + scope.subject()
                                        + '\u0000'
                                        + window.name()
                                        + '\u0000'
                                        + window.lengthMillis()
                                        + '\u0000'
                                        + window.unit().name()
                                        + (window.isCalendar() ? "\u0000" + window.calendar() : ""),
                                window,
                                request.weightIn(window)));
                }
            }
        }
        if (!local.isEmpty()) {
            boolean storeTime = nowMillis == StoreRequest.STORE_TIME;
            LocalShares.Outcome outcome = shares.reserve(
                    local,
                    storeTime ? System.nanoTime() / 1_000_000 : nowMillis,
                    storeTime ? WALL_CLOCK.millis() : nowMillis);
            Window refused = outcome.refused();
            if (refused != null) {
                return Decision.reject(refused, outcome.retryAfter());
            }
        }
        return Decision.degraded(named, unchecked);
    }

    /**
     * Gives back what a reservation whose store call timed out, or lost its connection on the way,
     * may still have recorded: the store may have run it after the limiter stopped waiting (a paused
     * or slow Redis runs what it received once it resumes), or run it and died before its answer left
     * (a Redis killed after its append-only file took the call), so a cancel in doubt of its entry id
     * ({@link Settlement#IN_DOUBT}) is queued behind it and retried until the store takes it. A cancel
     * in doubt of a reservation never recorded changes nothing (kit rule X11).
     *
     * @param request the request whose store call failed
     * @param failure the failure
     */
    void cancelInDoubt(StoreRequest request, Unavailable failure) {
        if (!mayHaveRun(failure.getCause())) {
            return; // refused before it was sent (breaker open, not connected), or answered with an error
        }
        metrics.settleDeferred("in_doubt");
        settlements.add(new Settlement(
                request.scopes(),
                request.entryId(),
                Settlement.IN_DOUBT,
                request.amounts(),
                null,
                StoreRequest.STORE_TIME,
                request.lease()));
    }

    /**
     * Whether the store may have run a call that failed: it timed out (the store may have received
     * it and may yet run it), the connection was lost with it in flight (the store may have run it
     * and lost the answer), or it was cancelled (a driver that closes its connection cancels the
     * commands it held, those in flight when the connection dropped among them: Lettuce keeps them to
     * send again, and the store closes such a connection rather than let them run twice). A call
     * refused before it was sent, or answered with an error, did not run.
     */
    static boolean mayHaveRun(@Nullable Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            String message = String.valueOf(cause.getMessage());
            if (cause.getClass().getSimpleName().contains("Timeout")
                    || message.contains("timed out")
                    || message.contains("did not answer within")
                    // the connection went with the call in flight: Lettuce, Jedis, the JDK's sockets
                    || message.contains("Connection closed")
                    || message.contains("Connection reset")
                    || message.contains("Unexpected end of stream")
                    || message.contains("Broken pipe")
                    || cause instanceof java.nio.channels.ClosedChannelException
                    || cause instanceof java.util.concurrent.CancellationException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    private static RateLimiterUnavailableException closed(Unavailable failure) {
        Throwable cause = failure.getCause();
        String message = "Rate limit store unavailable (" + failure.getMessage() + ")";
        if (cause instanceof RateLimiterUnavailableException e) {
            // the store's own exception already says what failed: add context, don't nest it twice
            Throwable root = e.getCause();
            return root == null
                    ? new RateLimiterUnavailableException(message + ": " + e.getMessage())
                    : new RateLimiterUnavailableException(message + ": " + e.getMessage(), root);
        }
        return cause == null
                ? new RateLimiterUnavailableException(message)
                : new RateLimiterUnavailableException(message + ": " + cause, cause);
    }

    /**
     * What a window does while the store cannot decide: its own policy, else its unit's, else the
     * limiter's for requests and tokens; money and every other unit fail closed unless told
     * otherwise (failing open on a budget in money is an open cheque).
     */
    FailurePolicy policy(Window window) {
        FailurePolicy own = window.failurePolicy();
        if (own != null) {
            return own;
        }
        FailurePolicy unit = unitPolicies.get(window.unit());
        if (unit != null) {
            return unit;
        }
        boolean countsRequestsOrTokens =
                window.unit().equals(Window.Unit.REQUESTS) || window.unit().equals(Window.Unit.TOKENS);
        return failOpen && countsRequestsOrTokens ? FailurePolicy.OPEN : FailurePolicy.CLOSED;
    }

    private Unavailable unavailable(String reason, @Nullable Throwable cause) {
        metrics.storeFailure(cause == null ? "circuit_open" : "error", failOpen);
        warn(reason, cause);
        return new Unavailable(reason, cause);
    }

    /** An answer that does not fit the request is a store failure too, not a wrong decision. */
    private static Evaluation checked(StoreRequest request, @Nullable Evaluation evaluation) {
        if (evaluation == null) {
            throw new RateLimiterUnavailableException("store answered nothing");
        }
        int windows = request.windows().size();
        if (evaluation.size() != windows) {
            throw new RateLimiterUnavailableException(
                    "store answered for " + evaluation.size() + " windows, asked for " + windows);
        }
        if (evaluation.isLeaseRefused() && request.lease() == null) {
            throw new RateLimiterUnavailableException("store refused a lease the request did not take");
        }
        if (!evaluation.isAllowed() && evaluation.rejectedIndex() >= windows) {
            throw new RateLimiterUnavailableException(
                    "store answered with window index " + evaluation.rejectedIndex() + " of " + windows);
        }
        return evaluation;
    }

    private void warn(String reason, @Nullable Throwable cause) {
        warning.warn(
                "Rate limiter ''{0}'': {1} (breaker {2}); {3}. Further warnings suppressed for 10 s. Cause: {4}",
                name,
                reason,
                breaker.getState(),
                failOpen ? "FAILING OPEN: requests are allowed without limits" : "failing closed: requests are refused",
                cause == null ? "-" : String.valueOf(cause));
    }

    static Throwable unwrap(Throwable failure) {
        Throwable current = failure;
        while (current instanceof CompletionException && current.getCause() != null) {
            current = current.getCause();
        }
        return current;
    }

    @Override
    public String toString() {
        return "store=" + store + ", breaker=" + breaker.getState() + ", failOpen=" + failOpen;
    }

    /** The store could not be used for a call; already counted and logged. */
    static final class Unavailable extends RuntimeException {

        private static final long serialVersionUID = 1L;

        Unavailable(String reason, @Nullable Throwable cause) {
            super(reason, cause, false, false);
        }
    }
}
