package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.util.List;

/** Boot's Lettuce connection factory, shared by the store, logged in as an ACL user given in {@code spring.data.redis.url}. */
class LettuceAclLineTest extends LineScenarios {

    @Override
    RedisServer startRedis() {
        return AclRedis.start();
    }

    @Override
    List<String> redisProperties(RedisServer redis) {
        return List.of(AclRedis.url(redis));
    }

    @Override
    String expectedStore() {
        return "lettuce";
    }
}
