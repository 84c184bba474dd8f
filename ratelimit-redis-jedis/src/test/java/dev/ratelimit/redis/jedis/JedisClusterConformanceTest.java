package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisClusterConformance;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import redis.clients.jedis.RedisClusterClient;

class JedisClusterConformanceTest extends RedisClusterConformance {

    private static RedisClusterClient jedis;

    @BeforeAll
    static void connect() {
        jedis = JedisClients.cluster(cluster.get(), 64, Duration.ofSeconds(10));
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
