package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Boot's Lettuce connection factory, shared by the store, logged in as an ACL user given in {@code spring.data.redis.url}. */
class LettuceAclLineTest extends LineScenarios {

    private static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = AclRedis.start();
        startApplication(AclRedis.url(redis));
    }

    @AfterAll
    static void stopRedis() {
        stopApplication();
        redis.close();
    }

    @Override
    String expectedStore() {
        return "lettuce";
    }
}
