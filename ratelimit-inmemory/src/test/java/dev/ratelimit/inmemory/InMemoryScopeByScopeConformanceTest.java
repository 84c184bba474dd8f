package dev.ratelimit.inmemory;

import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.WindowStoreConformanceKit;

/**
 * The kit over the in-memory store posing as one that cannot evaluate several scopes atomically
 * (as Redis Cluster cannot): shared budgets then go through the limiter's scope-by-scope protocol,
 * which must keep every budget exact on its own.
 */
class InMemoryScopeByScopeConformanceTest extends WindowStoreConformanceKit {

    @Override
    protected WindowStore createStore() {
        return new ForwardingStore(InMemoryWindowStore.create()) {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                if (request.scopes().size() > 1) {
                    throw new UnsupportedOperationException("one scope per request");
                }
                return super.evaluate(request);
            }

            @Override
            public boolean atomicAcrossScopes() {
                return false;
            }
        };
    }

    @Override
    protected boolean supportsLeases() {
        return true;
    }

    @Override
    protected boolean supportsBudgetLeases() {
        return true;
    }
}
