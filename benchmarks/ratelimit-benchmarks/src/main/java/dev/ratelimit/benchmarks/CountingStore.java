package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link WindowStore} that passes every call to another and counts them: every call, and those that
 * touch a shared budget's keys (a request or settlement naming a shared scope, taking or returning a
 * budget lease, or both in one exchange). It also keeps the budget leases taken and not yet returned, so the leases outstanding
 * (the bound on idle capacity) can be read at any time. Counting happens before the call, so a call
 * that fails is counted too.
 */
final class CountingStore implements WindowStore {

    private final WindowStore delegate;
    final AtomicLong calls = new AtomicLong();
    final AtomicLong budgetReserves = new AtomicLong();
    final AtomicLong budgetSettles = new AtomicLong();
    final AtomicLong budgetPeeks = new AtomicLong();
    final AtomicLong leaseTakeCalls = new AtomicLong();
    final AtomicLong leasesTaken = new AtomicLong();
    final AtomicLong leasesRefused = new AtomicLong();
    final AtomicLong leasesReturned = new AtomicLong();
    /** Exchanges: each counted once among the calls, and as one take and one return. */
    final AtomicLong leaseExchanges = new AtomicLong();

    final AtomicLong leasedRequests = new AtomicLong();
    final AtomicLong leasedTokens = new AtomicLong();
    private final Map<String, Held> held = new ConcurrentHashMap<>();
    private volatile long lastStampMillis;
    private final ThreadLocal<long[]> budgetCallsOfThread = ThreadLocal.withInitial(() -> new long[1]);

    /** A lease taken and not returned: its requests, tokens, and its stamp (the time its entry counts from). */
    record Held(long requests, long tokens, long stampMillis) {}

    CountingStore(WindowStore delegate) {
        this.delegate = delegate;
    }

    /**
     * Store calls on the shared budget's keys so far: reservations, settlements, peeks, and the lease
     * calls ({@link #leaseCalls}).
     */
    long budgetCalls() {
        return budgetReserves.get() + budgetSettles.get() + budgetPeeks.get() + leaseCalls();
    }

    /** Store calls for budget leases: takes, returns, and exchanges (a return and a take in one call). */
    long leaseCalls() {
        return leaseTakeCalls.get() + leasesReturned.get() - leaseExchanges.get();
    }

    /** Reservations that named the budget, counted on the calling thread (a single-threaded caller's probe). */
    long budgetReservesOfThisThread() {
        return budgetCallsOfThread.get()[0];
    }

    /** The leases outstanding: taken and not returned, whose entry is still counted at {@code nowMillis}. */
    long[] outstanding(long nowMillis, long windowMillis) {
        long requests = 0;
        long tokens = 0;
        for (Held lease : held.values()) {
            if (lease.stampMillis() + windowMillis > nowMillis) {
                requests += lease.requests();
                tokens += lease.tokens();
            }
        }
        return new long[] {requests, tokens};
    }

    /** The stamp of the lease taken last (its end): what a share spent from it stays counted until plus the window. */
    long lastStampMillis() {
        return lastStampMillis;
    }

    private static boolean namesBudget(List<StoreRequest.Scope> scopes) {
        for (StoreRequest.Scope scope : scopes) {
            if (scope.shared()) {
                return true;
            }
        }
        return false;
    }

    private void countRequest(StoreRequest request) {
        calls.incrementAndGet();
        if (namesBudget(request.scopes())) {
            budgetReserves.incrementAndGet();
            budgetCallsOfThread.get()[0]++;
        }
    }

    private void countSettlement(Settlement settlement) {
        calls.incrementAndGet();
        if (namesBudget(settlement.scopes())) {
            budgetSettles.incrementAndGet();
        }
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        countRequest(request);
        return delegate.evaluate(request);
    }

    @Override
    public CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        countRequest(request);
        return delegate.evaluateAsync(request);
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        calls.incrementAndGet();
        if (namesBudget(request.scopes())) {
            budgetPeeks.incrementAndGet();
        }
        return delegate.peek(request);
    }

    @Override
    public void settle(Settlement settlement) {
        countSettlement(settlement);
        delegate.settle(settlement);
    }

    @Override
    public CompletionStage<Void> settleAsync(Settlement settlement) {
        countSettlement(settlement);
        return delegate.settleAsync(settlement);
    }

    @Override
    public boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        calls.incrementAndGet();
        return delegate.renewLease(lease, entryId, nowMillis);
    }

    @Override
    public long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        calls.incrementAndGet();
        return delegate.leasesHeld(lease, nowMillis);
    }

    @Override
    public Evaluation takeLease(BudgetLease lease, long nowMillis) {
        calls.incrementAndGet();
        leaseTakeCalls.incrementAndGet();
        return taken(lease, delegate.takeLease(lease, nowMillis));
    }

    @Override
    public Evaluation exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis) {
        calls.incrementAndGet();
        leaseTakeCalls.incrementAndGet();
        leasesReturned.incrementAndGet();
        leaseExchanges.incrementAndGet();
        held.remove(returned.entryId());
        return taken(taking, delegate.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis));
    }

    private Evaluation taken(BudgetLease lease, Evaluation evaluation) {
        if (evaluation.isAllowed()) {
            leasesTaken.incrementAndGet();
            leasedRequests.addAndGet(lease.requests());
            leasedTokens.addAndGet(lease.amounts().get(dev.ratelimit.api.Window.Unit.TOKENS));
            long stamp = lease.stampMillis(evaluation.nowMillis());
            lastStampMillis = stamp;
            held.put(
                    lease.entryId(),
                    new Held(lease.requests(), lease.amounts().get(dev.ratelimit.api.Window.Unit.TOKENS), stamp));
        } else {
            leasesRefused.incrementAndGet();
        }
        return evaluation;
    }

    @Override
    public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        calls.incrementAndGet();
        leasesReturned.incrementAndGet();
        held.remove(lease.entryId());
        delegate.returnLease(lease, stampMillis, requestsUsed, used, nowMillis);
    }

    @Override
    public boolean atomicAcrossScopes() {
        return delegate.atomicAcrossScopes();
    }

    @Override
    public String toString() {
        return "CountingStore{" + delegate + "}";
    }
}
