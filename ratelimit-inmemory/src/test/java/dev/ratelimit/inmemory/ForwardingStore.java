package dev.ratelimit.inmemory;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;

/** A store that passes every call to another: tests override the call they watch or change. */
class ForwardingStore implements WindowStore {

    private final WindowStore delegate;

    ForwardingStore(WindowStore delegate) {
        this.delegate = delegate;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        return delegate.evaluate(request);
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        return delegate.peek(request);
    }

    @Override
    public void settle(Settlement settlement) {
        delegate.settle(settlement);
    }

    @Override
    public boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        return delegate.renewLease(lease, entryId, nowMillis);
    }

    @Override
    public long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        return delegate.leasesHeld(lease, nowMillis);
    }

    @Override
    public Evaluation takeLease(BudgetLease lease, long nowMillis) {
        return delegate.takeLease(lease, nowMillis);
    }

    @Override
    public Evaluation exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis) {
        return delegate.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis);
    }

    @Override
    public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        delegate.returnLease(lease, stampMillis, requestsUsed, used, nowMillis);
    }

    @Override
    public boolean atomicAcrossScopes() {
        return delegate.atomicAcrossScopes();
    }
}
