package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import java.util.Objects;
import redis.clients.jedis.UnifiedJedis;

/**
 * Creates {@link WindowStore}s over Redis through Jedis: one {@code EVALSHA} of the shared
 * sliding-window script per check, whatever the number of windows.
 *
 * <pre>{@code
 * ConnectionPoolConfig pool = new ConnectionPoolConfig();
 * pool.setMaxTotal(32);                          // commons-pool2 defaults to 8
 * pool.setMaxWait(Duration.ofMillis(200));       // and to waiting forever for a free connection
 * RedisClient jedis = RedisClient.builder()
 *         .hostAndPort("localhost", 6379)
 *         .clientConfig(DefaultJedisClientConfig.builder().timeoutMillis(500).build())
 *         .poolConfig(pool)
 *         .build();
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(JedisWindowStore.create(jedis)).build();
 * }</pre>
 *
 * <p>The store only calls {@code evalsha}, {@code eval} and their list-of-keys forms of {@link
 * UnifiedJedis}, so it works with Jedis 7 and 8, standalone or cluster. A cluster client ({@code
 * RedisClusterClient} or the older {@code JedisCluster}) is recognised by its class, and the keys
 * then carry the user's hash tag so one script reaches all of a user's windows. Timeouts and pool
 * limits are the client's: set them as above so that no thread waits forever; on a cluster client
 * also set {@code maxAttempts(1)}, since Jedis retries a command whose connection failed or timed
 * out, and a rate-limit check must not run twice.
 *
 * <p>The store creates no connection itself. Every failure surfaces as {@link
 * dev.ratelimit.api.RateLimiterUnavailableException}; only a {@code NOSCRIPT} answer is followed
 * by {@code EVAL}. Checks block the calling thread ({@link WindowStore#evaluateAsync} completes
 * synchronously). Stores are thread-safe as far as the client is, which Jedis pooled clients are.
 */
public final class JedisWindowStore {

    private JedisWindowStore() {}

    /**
     * Creates a store over a Jedis client, standalone or cluster.
     *
     * @param jedis the client; the store never closes it
     * @return the store
     */
    public static WindowStore create(UnifiedJedis jedis) {
        Objects.requireNonNull(jedis, "jedis must not be null");
        return new JedisStore(jedis, isCluster(jedis) ? KeyLayout.CLUSTER : KeyLayout.STANDALONE);
    }

    private static boolean isCluster(UnifiedJedis jedis) {
        for (Class<?> type = jedis.getClass(); type != null; type = type.getSuperclass()) {
            String name = type.getName();
            if (name.equals("redis.clients.jedis.RedisClusterClient")
                    || name.equals("redis.clients.jedis.JedisCluster")) {
                return true;
            }
        }
        return false;
    }
}
