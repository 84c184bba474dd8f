package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisStandaloneConformance;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class LettuceStandaloneConformanceTest extends RedisStandaloneConformance {

    private static RedisClient client;

    @BeforeAll
    static void connect() {
        client = RedisClient.create(redis.get().uri());
    }

    @AfterAll
    static void disconnect() {
        client.shutdown();
    }

    @Override
    protected WindowStore createStore() {
        return LettuceConformance.store(client);
    }
}
