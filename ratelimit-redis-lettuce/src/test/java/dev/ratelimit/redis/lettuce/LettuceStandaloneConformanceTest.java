package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testkit.redis.RedisServer;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class LettuceStandaloneConformanceTest extends WindowStoreConformanceKit {

    private static RedisServer redis;
    private static RedisClient client;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        client = RedisClient.create(redis.uri());
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        redis.close();
    }

    @Override
    protected WindowStore createStore() {
        return LettuceWindowStore.create(client);
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
