package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testkit.redis.RedisCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import redis.clients.jedis.RedisClusterClient;

class JedisClusterConformanceTest extends WindowStoreConformanceKit {

    private static RedisCluster cluster;
    private static RedisClusterClient jedis;

    @BeforeAll
    static void start() {
        cluster = RedisCluster.start();
        jedis = JedisClients.cluster(cluster, 64, Duration.ofSeconds(10));
    }

    @AfterAll
    static void stop() {
        jedis.close();
        cluster.close();
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
        String key = KeyLayout.CLUSTER.key(userId, window.getSeconds());
        return Long.valueOf(1).equals(cluster.nodeOf(key).call("EXISTS", key));
    }
}
