package com.example.store;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.WindowStoreConformanceKit;

/** The whole kit over {@link ExampleStore}, as a third party runs it. */
public class ExampleStoreConformanceTest extends WindowStoreConformanceKit {

    @Override
    protected WindowStore createStore() {
        return new ExampleStore();
    }

    @Override
    protected boolean supportsBudgetLeases() {
        return true;
    }
}
