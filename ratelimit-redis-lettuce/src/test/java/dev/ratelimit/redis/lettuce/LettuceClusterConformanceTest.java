package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testkit.redis.RedisCluster;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class LettuceClusterConformanceTest extends WindowStoreConformanceKit {

    private static RedisCluster cluster;
    private static RedisClusterClient client;

    @BeforeAll
    static void start() {
        cluster = RedisCluster.start();
        client = RedisClusterClient.create(cluster.uris().get(0));
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        cluster.close();
    }

    @Override
    protected WindowStore createStore() {
        // generous: on a loaded CI machine topology discovery plus three node connections can take a while
        return LettuceWindowStore.builder(client)
                .connectTimeout(java.time.Duration.ofSeconds(10))
                .build();
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
