package dev.ratelimit.springboot.lines;

import dev.ratelimit.testsupport.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Boot's Lettuce connection factory, shared by the store, on a Redis given by host and port. */
class LettuceLineTest extends LineScenarios {

    private static RedisServer redis;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        startApplication("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
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
