package dev.ratelimit.redis.lettuce;

import dev.ratelimit.testsupport.redis.RedisSentinel;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.Deque;
import java.util.List;

/** The conformance kit through Sentinel: a primary, a replica and a Sentinel, the client told only Sentinel's address. */
class LettuceSentinelConformanceTest extends LettuceDeploymentConformance {

    @Override
    RedisClient start(Deque<AutoCloseable> started) {
        RedisSentinel sentinel = RedisSentinel.start(List.of());
        started.push(sentinel);
        return RedisClient.create(
                RedisURI.Builder.sentinel(RedisServer.HOST, sentinel.sentinelPort(), RedisSentinel.MASTER_NAME)
                        .withTimeout(Duration.ofSeconds(5))
                        .build());
    }
}
