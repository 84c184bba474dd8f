package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisStandaloneBehaviour;
import java.time.Duration;
import redis.clients.jedis.RedisClient;

class JedisStandaloneBehaviourTest extends RedisStandaloneBehaviour {

    @Override
    protected WindowStore createStore(String host, int port, Duration commandTimeout) {
        RedisClient jedis =
                closeAfterTest(JedisClients.standalone(host, port, commandTimeout, 16, Duration.ofSeconds(5)));
        return JedisWindowStore.create(jedis);
    }

    @Override
    protected Class<?> hammerMain() {
        return JedisHammer.class;
    }
}
