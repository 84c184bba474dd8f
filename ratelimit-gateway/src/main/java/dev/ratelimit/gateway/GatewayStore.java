package dev.ratelimit.gateway;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The store the gateway's budgets live in: in-memory by default, Redis through Lettuce when {@code
 * REDIS_URL} is set. The gateway creates and closes the store's client. The concurrency slots are
 * leases in this store, taken and released in the reservation's own store calls ({@link Slots}).
 */
final class GatewayStore implements AutoCloseable {

    private final WindowStore store;
    private final String kind;
    private final String description;
    private final @Nullable AutoCloseable resources;
    private final @Nullable RedisURI redis;

    private GatewayStore(
            WindowStore store,
            String kind,
            String description,
            @Nullable AutoCloseable resources,
            @Nullable RedisURI redis) {
        this.store = store;
        this.redis = redis;
        this.kind = kind;
        this.description = description;
        this.resources = resources;
    }

    static GatewayStore select(@Nullable String redisUrl, Duration timeout) {
        if (redisUrl == null || redisUrl.isBlank()) {
            return new GatewayStore(
                    InMemoryWindowStore.create(),
                    "in-memory",
                    "in-memory (embedded, this process only; set REDIS_URL=redis://127.0.0.1:6379 to use Redis)",
                    null,
                    null);
        }
        RedisURI uri;
        try {
            uri = RedisURI.create(redisUrl.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(
                    "REDIS_URL is not a Redis URI (redis://host:port): " + e.getMessage(), e);
        }
        RedisClient client = RedisClient.create(uri);
        WindowStore store =
                LettuceWindowStore.builder(client).commandTimeout(timeout).build();
        String where = uri.getHost() + ":" + uri.getPort() + (uri.getDatabase() != 0 ? "/" + uri.getDatabase() : "");
        String description = "redis at " + where + " (Lettuce, Redis server time), " + probe(client);
        return new GatewayStore(
                store,
                "redis",
                description,
                () -> {
                    try {
                        if (store instanceof AutoCloseable closeable) {
                            closeable.close();
                        }
                    } finally {
                        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                    }
                },
                uri);
    }

    /** Says whether Redis answers now; the gateway starts either way and fails open until it does. */
    private static String probe(RedisClient client) {
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().ping();
            return "reachable";
        } catch (RuntimeException e) {
            return "NOT reachable now: requests pass unlimited (ratelimit_fail_open=1) until it is";
        }
    }

    WindowStore store() {
        return store;
    }

    /** The Redis server when the store is Redis, for the concurrency slots' description. */
    @Nullable
    RedisURI redis() {
        return redis;
    }

    String kind() {
        return kind;
    }

    String description() {
        return description;
    }

    @Override
    public void close() {
        if (resources != null) {
            try {
                resources.close();
            } catch (Exception e) {
                // shutting down anyway
            }
        }
    }
}
