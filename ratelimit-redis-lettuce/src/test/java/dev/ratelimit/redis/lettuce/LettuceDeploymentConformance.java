package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import io.lettuce.core.RedisClient;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The conformance kit on a deployment the subclass starts for the class (Sentinel, TLS), through one Lettuce
 * client; the client and the deployment are closed after the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LettuceDeploymentConformance extends WindowStoreConformanceKit {

    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private RedisClient client;

    /**
     * Starts the deployment, registering what must be closed after the class with {@code started} as soon as
     * it runs, and returns the client the stores use.
     */
    abstract RedisClient start(Deque<AutoCloseable> started);

    @BeforeAll
    void connect() {
        client = start(started);
    }

    @AfterAll
    void disconnect() throws Exception {
        if (client != null) {
            client.shutdown();
        }
        while (!started.isEmpty()) {
            started.pop().close();
        }
    }

    @Override
    protected WindowStore createStore() {
        return LettuceConformance.store(client);
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
