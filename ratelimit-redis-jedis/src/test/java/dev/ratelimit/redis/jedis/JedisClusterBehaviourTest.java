package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisClusterBehaviour;
import dev.ratelimit.testsupport.redis.RedisCluster;
import java.time.Duration;

class JedisClusterBehaviourTest extends RedisClusterBehaviour {

    @Override
    protected WindowStore createStore(RedisCluster cluster) {
        return JedisWindowStore.create(closeAfterTest(JedisClients.cluster(cluster, 16, Duration.ofSeconds(5))));
    }
}
