package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.util.List;

/**
 * Spring Data Redis on Jedis ({@code JedisConnectionFactory}) and the starter's Jedis store, logged in as an ACL
 * user given in {@code spring.data.redis.url}; needs a Jedis with {@code RedisClient} (7.4 or later).
 */
class JedisLineTest extends LineScenarios {

    @Override
    RedisServer startRedis() {
        return AclRedis.start();
    }

    @Override
    List<String> redisProperties(RedisServer redis) {
        return List.of(AclRedis.url(redis), "spring.data.redis.client-type=jedis", "ratelimit.store=jedis");
    }

    @Override
    String expectedStore() {
        return "jedis";
    }
}
