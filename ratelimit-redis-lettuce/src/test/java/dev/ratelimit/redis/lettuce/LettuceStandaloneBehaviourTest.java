package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisStandaloneBehaviour;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;

class LettuceStandaloneBehaviourTest extends RedisStandaloneBehaviour {

    @Override
    protected WindowStore createStore(String host, int port, Duration commandTimeout) {
        RedisClient client = RedisClient.create(RedisURI.create(host, port));
        closeAfterTest(client::shutdown);
        return LettuceWindowStore.builder(client).commandTimeout(commandTimeout).build();
    }

    @Override
    protected Class<?> hammerMain() {
        return LettuceHammer.class;
    }
}
