package dev.ratelimit.testsupport.redis;

import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs a private {@link RedisServer} or {@link RedisCluster} for a JUnit 5 test class or test, so
 * test classes do not repeat {@code @BeforeAll}/{@code @AfterAll} pairs.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();
 *
 * @BeforeAll
 * static void connect() {
 *     client = RedisClient.create(redis.get().uri()); // already running here
 * }
 * }</pre>
 *
 * <p>Registered on a {@code static} field, one server runs from before the class's first
 * {@code @BeforeAll} method to after its last {@code @AfterAll} method, {@code @Nested} classes
 * included; on an instance field, a fresh one runs around each test, from before its
 * {@code @BeforeEach} methods to after its {@code @AfterEach} methods. Stopping deletes the
 * server's files.
 *
 * @param <T> {@link RedisServer} or {@link RedisCluster}
 */
public final class RedisServerExtension<T extends AutoCloseable>
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private final Supplier<T> starter;
    private @Nullable T running;
    // The extension context that started the server stops it: nested classes see the callbacks of
    // their enclosing class's extensions too, and must neither start a second server nor stop the first.
    private @Nullable String owner;

    private RedisServerExtension(Supplier<T> starter) {
        this.starter = starter;
    }

    /**
     * Returns an extension that runs one standalone {@code redis-server} ({@link RedisServer#start()}).
     *
     * @return the extension
     */
    public static RedisServerExtension<RedisServer> standalone() {
        return new RedisServerExtension<>(RedisServer::start);
    }

    /**
     * Returns an extension that runs a three-master cluster ({@link RedisCluster#start()}).
     *
     * @return the extension
     */
    public static RedisServerExtension<RedisCluster> cluster() {
        return new RedisServerExtension<>(RedisCluster::start);
    }

    /**
     * Returns the running server or cluster.
     *
     * @return the server or cluster
     * @throws IllegalStateException outside the lifecycle of the test class or test that runs it
     */
    public synchronized T get() {
        T current = running;
        if (current == null) {
            throw new IllegalStateException(
                    "Redis is not running: register the extension with @RegisterExtension and use it inside"
                            + " the test class (on a static field) or the test (on an instance field)");
        }
        return current;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        start(context);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        start(context);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        stop(context);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        stop(context);
    }

    private synchronized void start(ExtensionContext context) {
        if (running == null) {
            running = Objects.requireNonNull(starter.get(), "started");
            owner = context.getUniqueId();
        }
    }

    private synchronized void stop(ExtensionContext context) throws Exception {
        T current = running;
        if (current != null && context.getUniqueId().equals(owner)) {
            running = null;
            owner = null;
            current.close();
        }
    }

    @Override
    public synchronized String toString() {
        return "RedisServerExtension{" + (running == null ? "not running" : running) + "}";
    }
}
