package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisStandaloneConformance;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import redis.clients.jedis.RedisClient;

class JedisStandaloneConformanceTest extends RedisStandaloneConformance {

    private static RedisClient jedis;

    @BeforeAll
    static void connect() {
        jedis = JedisClients.standalone(
                redis.get().host(), redis.get().port(), Duration.ofSeconds(2), 64, Duration.ofSeconds(10));
    }

    @AfterAll
    static void disconnect() {
        jedis.close();
    }

    @Override
    protected WindowStore createStore() {
        return JedisWindowStore.create(jedis);
    }
}
