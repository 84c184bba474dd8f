package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Spring Data Redis on Jedis ({@code JedisConnectionFactory}) and the starter's Jedis store, logged in as an ACL
 * user given in {@code spring.data.redis.url}; needs a Jedis with {@code RedisClient} (7.4 or later).
 */
class JedisLineTest extends LineScenarios {

    private static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = AclRedis.start();
        startApplication(AclRedis.url(redis), "spring.data.redis.client-type=jedis", "ratelimit.store=jedis");
    }

    @AfterAll
    static void stopRedis() {
        stopApplication();
        redis.close();
    }

    @Override
    String expectedStore() {
        return "jedis";
    }
}
