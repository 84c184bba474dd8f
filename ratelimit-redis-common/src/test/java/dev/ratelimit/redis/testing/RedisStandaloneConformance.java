package dev.ratelimit.redis.testing;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.time.Duration;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The conformance kit against one private standalone server, with what every Redis store declares
 * there: real expiry (key TTLs, seen with {@code EXISTS}) and shared scopes. An adapter's test
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
        return Long.valueOf(1)
                .equals(redis.get().call("EXISTS", KeyLayout.STANDALONE.key(userId, window.getSeconds())));
    }

    @Override
    protected boolean supportsSharedScopes() {
        return true;
    }
}
