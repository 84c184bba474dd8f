package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.util.List;

/** Boot's Lettuce connection factory, shared by the store, on a Redis given by host and port. */
class LettuceLineTest extends LineScenarios {

    @Override
    RedisServer startRedis() {
        return RedisServer.start();
    }

    @Override
    List<String> redisProperties(RedisServer redis) {
        return List.of("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
    }

    @Override
    String expectedStore() {
        return "lettuce";
    }
}
