package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.WindowStoreConformanceKit;
import dev.ratelimit.testsupport.redis.RedisSentinel;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The conformance kit through Sentinel: a primary, a replica and a Sentinel, the client told only Sentinel's address. */
class LettuceSentinelConformanceTest extends WindowStoreConformanceKit {

    private static RedisSentinel sentinel;
    private static RedisClient client;

    @BeforeAll
    static void connect() {
        sentinel = RedisSentinel.start(List.of());
        client = RedisClient.create(
                RedisURI.Builder.sentinel(RedisServer.HOST, sentinel.sentinelPort(), RedisSentinel.MASTER_NAME)
                        .withTimeout(Duration.ofSeconds(5))
                        .build());
    }

    @AfterAll
    static void disconnect() {
        if (client != null) {
            client.shutdown();
        }
        if (sentinel != null) {
            sentinel.close();
        }
    }

    @Override
    protected WindowStore createStore() {
        return LettuceConformance.store(client);
    }

    @Override
    protected boolean supportsLeases() {
        return true;
    }
}
