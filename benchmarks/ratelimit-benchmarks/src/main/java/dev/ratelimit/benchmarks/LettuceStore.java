package dev.ratelimit.benchmarks;

import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import io.lettuce.core.RedisClient;
import java.time.Duration;

/**
 * A Lettuce client and our store over it, opened and closed together, so the benchmarks that set up
 * a limiter over Lettuce share one spelling of it (setup and teardown only, never a measured call).
 */
final class LettuceStore implements AutoCloseable {

    /**
     * The wait for the store's connection in the JMH benchmarks: a fork starting on a busy machine may
     * take longer than the default 3 s to connect, and a fail-closed warm-up check would end the run.
     */
    static final Duration PATIENT_CONNECT = Duration.ofSeconds(30);

    private final RedisClient client;
    private final CloseableWindowStore store;

    private LettuceStore(RedisClient client, CloseableWindowStore store) {
        this.client = client;
        this.store = store;
    }

    /** Opens a client to the Redis at {@code uri} and a store with the default connect timeout. */
    static LettuceStore open(String uri) {
        RedisClient client = RedisClient.create(uri);
        return new LettuceStore(client, LettuceWindowStore.create(client));
    }

    /** Opens a client to the Redis at {@code uri} and a store that waits {@code connectTimeout} to connect. */
    static LettuceStore open(String uri, Duration connectTimeout) {
        RedisClient client = RedisClient.create(uri);
        return new LettuceStore(
                client,
                LettuceWindowStore.builder(client)
                        .connectTimeout(connectTimeout)
                        .build());
    }

    /** Returns a builder of a fail-closed limiter over the store, so a store failure fails the run. */
    SlidingWindowRateLimiter.Builder failClosedLimiter() {
        return SlidingWindowRateLimiter.builder(store).failOpen(false);
    }

    /** Closes the store, then shuts the client down even if closing the store failed. */
    @Override
    public void close() {
        try {
            store.close();
        } finally {
            client.shutdown();
        }
    }

    /** Closes as {@link #close()} does, ignoring a failure to close the store (best effort). */
    void closeQuietly() {
        try {
            store.close();
        } catch (RuntimeException e) {
            // best effort: the figure is already measured
        } finally {
            client.shutdown();
        }
    }
}
