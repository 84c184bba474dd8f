package dev.ratelimit.redis.testing;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against one private standalone server, with what every Redis store declares
 * there: real expiry (key TTLs, seen with {@code EXISTS}) and state sizes ({@code MEMORY USAGE}). An adapter's test
 * creates its driver client in its own {@code @BeforeAll}, when the server already runs.
 */
public abstract class RedisStandaloneConformance extends WindowStoreConformanceKit {

    /** The server of the whole class, running before the subclass's {@code @BeforeAll} methods. */
    @RegisterExtension
    protected static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    @Override
    protected boolean supportsRealExpiry() {
        return true;
    }

    @Override
    protected boolean holdsStateFor(WindowStore store, String userId, Duration window) {
        return Long.valueOf(1).equals(redis.get().call("EXISTS", key(userId, Window.of(1, window))));
    }

    @Override
    protected boolean supportsStateSize() {
        return true;
    }

    @Override
    protected long stateSize(WindowStore store, String userId, Window window) {
        return (Long) redis.get().call("MEMORY", "USAGE", key(userId, window));
    }

    private static String key(String userId, Window window) {
        return KeySpace.of(KeyLayout.STANDALONE).key(StoreRequest.Scope.user(userId, List.of(window)), window);
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
