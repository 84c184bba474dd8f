package dev.ratelimit.servlet;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Wraps the real in-memory store: counts calls, remembers subjects, and can be made to fail. */
final class CountingStore implements WindowStore {

    private final WindowStore delegate = InMemoryWindowStore.create();
    final AtomicInteger calls = new AtomicInteger();
    final Set<String> subjects = ConcurrentHashMap.newKeySet();
    volatile boolean failing;

    @Override
    public Evaluation evaluate(StoreRequest request) {
        calls.incrementAndGet();
        subjects.add(request.subject());
        if (failing) {
            throw new RateLimiterUnavailableException("store down (test)");
        }
        return delegate.evaluate(request);
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        if (failing) {
            throw new RateLimiterUnavailableException("store down (test)");
        }
        return delegate.peek(request);
    }

    @Override
    public void settle(Settlement settlement) {
        if (failing) {
            throw new RateLimiterUnavailableException("store down (test)");
        }
        delegate.settle(settlement);
    }
}
