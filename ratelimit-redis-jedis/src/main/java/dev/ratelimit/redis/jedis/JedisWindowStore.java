package dev.ratelimit.redis.jedis;

import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisKeys;
import dev.ratelimit.redis.internal.StoreCheck;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.commands.ProtocolCommand;
import redis.clients.jedis.exceptions.JedisDataException;

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
 * <p>Building a store checks the deployment when Redis answers: that the client's credentials are
 * accepted, that its user may run every command of the script on the key prefix (the minimal ACL
 * rule is in the exception's message and docs/reliability.md), and that Redis runs the script (7.0 or
 * later); any of these failing throws {@link IllegalStateException} at once, naming what is
 * missing. It also logs a warning when Redis may evict keys ({@code maxmemory-policy} other than
 * {@code noeviction}, where {@code CONFIG GET} is permitted): an evicted window forgets its counts.
 * A Redis that cannot be reached is not checked, and the store is built all the same.
 *
 * <p>The store creates no connection itself. Every failure surfaces as {@link
 * dev.ratelimit.api.RateLimiterUnavailableException}; only a {@code NOSCRIPT} answer is followed
 * by {@code EVAL}. With a {@code RedisClient}, a connection that failed goes back to its pool on
 * another thread: the pool replaces it at once, and against a stalled Redis that replacement's
 * handshake would cost the check a second timeout. Checks block the calling thread ({@link
 * WindowStore#evaluateAsync} completes synchronously). Stores are thread-safe as far as the client
 * is, which Jedis pooled clients are.
 */
public final class JedisWindowStore {

    private JedisWindowStore() {}

    /**
     * Creates a store over a Jedis client, standalone or cluster (a {@code RedisClusterClient} or
     * {@code JedisCluster} is recognised by its type; use {@link #builder} for other cluster clients).
     *
     * @param jedis the client; the store never closes it
     * @return the store
     */
    public static WindowStore create(UnifiedJedis jedis) {
        return builder(jedis).build();
    }

    /**
     * Returns a builder of a store over a Jedis client.
     *
     * @param jedis the client; the store never closes it
     * @return a new builder
     */
    public static Builder builder(UnifiedJedis jedis) {
        return new Builder(Objects.requireNonNull(jedis, "jedis must not be null"));
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

    /** Builds a Jedis store; not thread-safe. */
    public static final class Builder {

        private final UnifiedJedis jedis;
        private @Nullable Boolean cluster;
        private String keyPrefix = KeySpace.DEFAULT_PREFIX;

        private Builder(UnifiedJedis jedis) {
            this.jedis = jedis;
        }

        /**
         * Says whether the client talks to Redis Cluster, where all windows of a user must share a
         * hash slot ({@code ratelimit:{<user>}:<seconds>} keys). By default a {@code
         * RedisClusterClient} or {@code JedisCluster} is recognised by its type; set it for a {@code
         * UnifiedJedis} built over a cluster connection provider.
         *
         * @param cluster whether the client is a cluster client
         * @return this builder
         */
        public Builder cluster(boolean cluster) {
            this.cluster = cluster;
            return this;
        }

        /**
         * Sets the prefix of every key, {@code <prefix>:<user>:<window seconds>}; {@value
         * KeySpace#DEFAULT_PREFIX} by default. Give services or environments that share one Redis
         * different prefixes, so equal user ids never share a budget across them.
         *
         * @param keyPrefix a non-empty prefix without braces (they would move a cluster hash tag)
         * @return this builder
         */
        public Builder keyPrefix(String keyPrefix) {
            this.keyPrefix = RedisKeys.checkPrefix(keyPrefix, "keyPrefix");
            return this;
        }

        /**
         * Checks the deployment when Redis answers (see the class documentation) and builds the
         * store; it creates no connection of its own.
         *
         * @return the store
         * @throws IllegalStateException if Redis refuses the client's credentials, its user lacks a
         *     permission the store needs, or Redis cannot run the script
         */
        public WindowStore build() {
            boolean clustered = cluster != null ? cluster : isCluster(jedis);
            KeySpace space = new KeySpace(clustered ? KeyLayout.CLUSTER : KeyLayout.STANDALONE, keyPrefix);
            check(jedis, space, clustered);
            return new JedisStore(jedis, jedis instanceof RedisClient pooled ? pooled.getPool() : null, space);
        }

        private static void check(UnifiedJedis jedis, KeySpace space, boolean clustered) {
            try {
                StoreCheck.run("Jedis", space, (key, command) -> {
                    ProtocolCommand name = () -> command[0].getBytes(StandardCharsets.UTF_8);
                    String[] arguments = java.util.Arrays.copyOfRange(command, 1, command.length);
                    try {
                        return clustered && key != null
                                ? jedis.sendCommand(key, name, arguments)
                                : jedis.sendCommand(name, arguments);
                    } catch (JedisDataException e) {
                        throw new StoreCheck.ReplyError(String.valueOf(e.getMessage()), e);
                    }
                });
            } catch (IllegalStateException e) {
                throw e;
            } catch (RuntimeException e) {
                String refused = StoreCheck.credentialsRefused(e);
                if (refused != null) {
                    throw StoreCheck.refusedCredentials("Jedis", refused);
                }
                System.getLogger("dev.ratelimit.redis")
                        .log(
                                System.Logger.Level.WARNING,
                                "Rate limiter store (Jedis): Redis cannot be reached now ({0}); its credentials,"
                                        + " permissions and eviction policy are not checked",
                                String.valueOf(e));
            }
        }
    }
}
