package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisClusterBehaviour;
import dev.ratelimit.testsupport.redis.RedisCluster;
import io.lettuce.core.cluster.RedisClusterClient;

class LettuceClusterBehaviourTest extends RedisClusterBehaviour {

    @Override
    protected WindowStore createStore(RedisCluster cluster) {
        RedisClusterClient client = RedisClusterClient.create(cluster.uris().get(1));
        closeAfterTest(client::shutdown);
        // generous: on a loaded CI machine topology discovery plus three node connections can take a while
        return LettuceWindowStore.builder(client)
                .connectTimeout(java.time.Duration.ofSeconds(10))
                .build();
    }
}
