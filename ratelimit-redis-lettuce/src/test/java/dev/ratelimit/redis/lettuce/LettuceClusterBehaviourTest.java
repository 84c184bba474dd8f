package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisClusterBehaviour;
import dev.ratelimit.testkit.redis.RedisCluster;
import io.lettuce.core.cluster.RedisClusterClient;

class LettuceClusterBehaviourTest extends RedisClusterBehaviour {

    @Override
    protected WindowStore createStore(RedisCluster cluster) {
        RedisClusterClient client = RedisClusterClient.create(cluster.uris().get(1));
        closeAfterTest(client::shutdown);
        return LettuceWindowStore.create(client);
    }
}
