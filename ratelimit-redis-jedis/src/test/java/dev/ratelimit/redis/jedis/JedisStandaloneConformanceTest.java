package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testkit.redis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import redis.clients.jedis.RedisClient;

class JedisStandaloneConformanceTest extends WindowStoreConformanceKit {

    private static RedisServer redis;
    private static RedisClient jedis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        jedis = JedisClients.standalone(redis.host(), redis.port(), Duration.ofSeconds(2), 64, Duration.ofSeconds(10));
    }

    @AfterAll
    static void stop() {
        jedis.close();
        redis.close();
    }

    @Override
    protected WindowStore createStore() {
        return JedisWindowStore.create(jedis);
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
