package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisStandaloneConformance;
import io.lettuce.core.RedisClient;
import java.time.Duration;
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
        // The kit judges correctness, not speed: a busy machine must not turn a slow reply into a failure.
        return LettuceWindowStore.builder(client)
                .commandTimeout(Duration.ofSeconds(2))
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }
}
