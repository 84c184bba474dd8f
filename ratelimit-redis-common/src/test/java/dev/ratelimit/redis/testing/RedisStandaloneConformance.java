package dev.ratelimit.redis.testing;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testkit.redis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The conformance kit against one private standalone server, with what every Redis store declares
 * there: real expiry (key TTLs, seen with {@code EXISTS}) and shared scopes. An adapter's test
 * creates its driver client in its own {@code @BeforeAll}, which runs after this one.
 */
public abstract class RedisStandaloneConformance extends WindowStoreConformanceKit {

    /** The server of the whole class. */
    protected static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.start();
    }

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    @Override
    protected boolean supportsRealExpiry() {
        return true;
    }

    @Override
    protected boolean holdsStateFor(WindowStore store, String userId, Duration window) {
        return Long.valueOf(1).equals(redis.call("EXISTS", KeyLayout.STANDALONE.key(userId, window.getSeconds())));
    }

    @Override
    protected boolean supportsSharedScopes() {
        return true;
    }
}
