package dev.ratelimit.redis.testing;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against a private three-master cluster, with what every Redis store declares
 * there: real expiry (key TTLs, seen with {@code EXISTS} on the key's node) and state sizes; shared
 * budgets go through the limiter scope by scope (one script touches one slot). An adapter's test creates its driver client in its own {@code
 * @BeforeAll}, when the cluster already runs.
 */
public abstract class RedisClusterConformance extends WindowStoreConformanceKit {

    /** The cluster of the whole class, running before the subclass's {@code @BeforeAll} methods. */
    @RegisterExtension
    protected static final RedisServerExtension<RedisCluster> cluster = RedisServerExtension.cluster();

    @Override
    protected boolean supportsRealExpiry() {
        return true;
    }

    @Override
    protected boolean holdsStateFor(WindowStore store, String userId, Duration window) {
        String key = key(userId, Window.of(1, window));
        return Long.valueOf(1).equals(cluster.get().nodeOf(key).call("EXISTS", key));
    }

    @Override
    protected boolean supportsStateSize() {
        return true;
    }

    @Override
    protected long stateSize(WindowStore store, String userId, Window window) {
        String key = key(userId, window);
        return (Long) cluster.get().nodeOf(key).call("MEMORY", "USAGE", key);
    }

    private static String key(String userId, Window window) {
        return KeySpace.of(KeyLayout.CLUSTER).key(StoreRequest.Scope.user(userId, List.of(window)), window);
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
