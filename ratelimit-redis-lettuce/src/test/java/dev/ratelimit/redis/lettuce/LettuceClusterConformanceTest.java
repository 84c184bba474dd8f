package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.testing.RedisClusterConformance;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

class LettuceClusterConformanceTest extends RedisClusterConformance {

    private static RedisClusterClient client;

    @BeforeAll
    static void connect() {
        client = RedisClusterClient.create(cluster.get().uris().get(0));
    }

    @AfterAll
    static void disconnect() {
        client.shutdown();
    }

    @Override
    protected WindowStore createStore() {
        // generous: on a loaded CI machine topology discovery plus three node connections can take a while,
        // and the kit judges correctness, not speed
        return LettuceWindowStore.builder(client)
                .commandTimeout(Duration.ofSeconds(2))
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }
}
