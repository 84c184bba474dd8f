package dev.ratelimit.inmemory;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import java.time.Duration;

class InMemoryWindowStoreConformanceTest extends WindowStoreConformanceKit {

    @Override
    protected WindowStore createStore() {
        return InMemoryWindowStore.create();
    }

    @Override
    protected boolean supportsRealExpiry() {
        return true;
    }

    @Override
    protected boolean holdsStateFor(WindowStore store, String userId, Duration window) {
        return ((InMemoryWindowStore) store).holdsStateFor(userId);
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
