package dev.ratelimit.redis.testing;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against a private three-master cluster, with what every Redis store declares
 * there: real expiry (key TTLs, seen with {@code EXISTS} on the key's node) and no shared scopes
 * (one script touches one slot). An adapter's test creates its driver client in its own {@code
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
        String key = KeyLayout.CLUSTER.key(userId, window.getSeconds());
        return Long.valueOf(1).equals(cluster.get().nodeOf(key).call("EXISTS", key));
    }
}
