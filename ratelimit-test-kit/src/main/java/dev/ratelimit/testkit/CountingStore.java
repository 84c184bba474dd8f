package dev.ratelimit.testkit;

import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/** A {@link WindowStore} decorator that counts the calls reaching the store it wraps. */
public final class CountingStore implements WindowStore {

    private final WindowStore delegate;
    private final AtomicInteger calls = new AtomicInteger();

    /**
     * Wraps {@code delegate}.
     *
     * @param delegate the store whose calls are counted
     */
    public CountingStore(WindowStore delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate must not be null");
    }

    /**
     * Returns the number of evaluations, blocking or not, that reached the wrapped store.
     *
     * @return the number of calls
     */
    public int calls() {
        return calls.get();
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        calls.incrementAndGet();
        return delegate.evaluate(request);
    }

    @Override
    public CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        calls.incrementAndGet();
        return delegate.evaluateAsync(request);
    }
}
