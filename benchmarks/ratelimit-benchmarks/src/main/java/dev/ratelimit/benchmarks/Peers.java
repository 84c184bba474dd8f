package dev.ratelimit.benchmarks;

import io.github.bucket4j.BandwidthBuilder;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConfigurationBuilder;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * How the peers are set up, the way their documentation sets them up, with the benchmark's limits.
 *
 * <p>Bucket4j: the Lettuce compare-and-swap proxy manager over one connection, a token bucket of
 * {@code limit} tokens refilled greedily over the window, keys expiring once the bucket would be full
 * again. Redisson: an {@link RRateLimiter} per user and window, {@link RateType#OVERALL}, with a
 * keep-alive so its keys expire too; its rate is set once per user before measuring (a real
 * application would pay that round trip on each user's first request, or on every request).
 */
final class Peers {

    private Peers() {}

    /** Opens a Lettuce connection with the codec Bucket4j's proxy manager needs. */
    static StatefulRedisConnection<String, byte[]> bucket4jConnection(RedisClient client) {
        return client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
    }

    /** Builds Bucket4j's Lettuce proxy manager over a connection. */
    static ProxyManager<String> bucket4j(StatefulRedisConnection<String, byte[]> connection) {
        return Bucket4jLettuce.casBasedBuilder(connection)
                .expirationAfterWrite(
                        ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
                .build();
    }

    /** Returns the bucket configuration with one bandwidth per window, all-or-nothing like ours. */
    static BucketConfiguration bucketConfiguration(List<dev.ratelimit.api.Window> windows) {
        ConfigurationBuilder builder = BucketConfiguration.builder();
        for (dev.ratelimit.api.Window window : windows) {
            builder.addLimit(BandwidthBuilder.builder()
                    .capacity(window.limit())
                    .refillGreedy(window.limit(), window.length())
                    .build());
        }
        return builder.build();
    }

    /** Creates a Redisson client with a pool sized for the benchmark threads. */
    static RedissonClient redisson() {
        Config config = new Config();
        config.useSingleServer()
                .setAddress(BenchRedis.uri())
                .setConnectionPoolSize(BenchRedis.POOL_SIZE)
                .setConnectionMinimumIdleSize(BenchRedis.POOL_SIZE);
        return Redisson.create(config);
    }

    /** Returns a user's Redisson limiter for one window, its rate set. */
    static RRateLimiter redissonLimiter(RedissonClient client, String user, dev.ratelimit.api.Window window) {
        RRateLimiter limiter = client.getRateLimiter("redisson:" + user + ":" + window.lengthSeconds());
        limiter.trySetRate(
                RateType.OVERALL,
                window.limit(),
                window.length(),
                window.length().plusSeconds(1));
        return limiter;
    }
}
