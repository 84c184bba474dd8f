package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisKeys;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Creates {@link WindowStore}s over Redis through Lettuce: one {@code EVALSHA} of the shared
 * sliding-window script per check, whatever the number of windows.
 *
 * <pre>{@code
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(LettuceWindowStore.create(client)).build();
 *
 * RedisClusterClient cluster = RedisClusterClient.create("redis://node1:6379");
 * RateLimiter clustered = SlidingWindowRateLimiter.builder(LettuceWindowStore.create(cluster)).build();
 * }</pre>
 *
 * <p>A store opens one connection of its own, in the background from its creation (and again on
 * a check after a failed attempt), so creating it needs no running Redis; all its checks, blocking
 * or asynchronous, share that connection (Lettuce pipelines concurrent commands on it). A blocking
 * check is the same single command awaited. To fail fast when Redis is down, building a store
 * adjusts the client's options: commands rejected at once while disconnected instead of queued, and
 * per-connection command timeouts; the store's connection then uses the {@linkplain
 * Builder#commandTimeout command timeout} ({@value #DEFAULT_COMMAND_TIMEOUT_MILLIS} ms by default).
 * On a standalone (or Sentinel) client automatic reconnection is turned off and the store replaces
 * a connection Redis closed itself, trying every 100 ms, so checks are exact again within moments
 * of Redis accepting connections (Lettuce's reconnection backs off for seconds); a connection that
 * answers {@code READONLY} (a primary demoted by a failover) is replaced too. On a cluster client
 * Lettuce keeps reconnecting node connections, and adaptive topology refresh is turned on so a
 * failover's new master is found. Use a dedicated client if other code needs different options.
 *
 * <p>Building a store waits for its first connection up to the {@linkplain Builder#connectTimeout
 * connect timeout} and checks the deployment on it: that Redis accepts the client's credentials,
 * that its user may run every command of the script on the key prefix, and that Redis runs the
 * script (7.0 or later); any of these failing throws {@link IllegalStateException} naming what is
 * missing (the minimal ACL rule included). A warning is logged when Redis may evict keys ({@code
 * maxmemory-policy} other than {@code noeviction}, where {@code CONFIG GET} is permitted). A Redis
 * that cannot be reached yet is checked when the store first reaches it.
 *
 * <p>Every failure, including a timeout, surfaces as {@link
 * dev.ratelimit.api.RateLimiterUnavailableException}; a check that timed out is never re-sent,
 * since Redis may have recorded it. Stores are thread-safe and implement {@link AutoCloseable}:
 * closing one closes its connection, never the client.
 */
public final class LettuceWindowStore {

    /** The default command timeout in milliseconds. */
    public static final long DEFAULT_COMMAND_TIMEOUT_MILLIS = 500;

    /** The default wait for the store's connection to be opened, in milliseconds. */
    public static final long DEFAULT_CONNECT_TIMEOUT_MILLIS = 3_000;

    private LettuceWindowStore() {}

    /**
     * Creates a store over a standalone Redis (or a Sentinel-managed master) with the default
     * command timeout.
     *
     * @param client the client; its options are adjusted as described in the class documentation
     * @return the store; it connects in the background, and needs no running Redis to be created
     */
    public static CloseableWindowStore create(RedisClient client) {
        return builder(client).build();
    }

    /**
     * Creates a store over Redis Cluster with the default command timeout; all windows of a user
     * share one hash slot.
     *
     * @param client the cluster client; its options are adjusted as described in the class
     *     documentation
     * @return the store; it connects in the background, and needs no running Redis to be created
     */
    public static CloseableWindowStore create(RedisClusterClient client) {
        return builder(client).build();
    }

    /**
     * Returns a builder of a store over a standalone Redis.
     *
     * @param client the client
     * @return a new builder
     */
    public static Builder builder(RedisClient client) {
        return new Builder(Objects.requireNonNull(client, "client must not be null"), null);
    }

    /**
     * Returns a builder of a store over Redis Cluster.
     *
     * @param client the cluster client
     * @return a new builder
     */
    public static Builder builder(RedisClusterClient client) {
        return new Builder(null, Objects.requireNonNull(client, "client must not be null"));
    }

    /** Builds a Lettuce store; not thread-safe. */
    public static final class Builder {

        private final @Nullable RedisClient client;
        private final @Nullable RedisClusterClient clusterClient;
        private Duration commandTimeout = Duration.ofMillis(DEFAULT_COMMAND_TIMEOUT_MILLIS);
        private Duration connectTimeout = Duration.ofMillis(DEFAULT_CONNECT_TIMEOUT_MILLIS);
        private String keyPrefix = KeySpace.DEFAULT_PREFIX;

        private Builder(@Nullable RedisClient client, @Nullable RedisClusterClient clusterClient) {
            this.client = client;
            this.clusterClient = clusterClient;
        }

        /**
         * Sets how long one check may wait for Redis before failing with {@link
         * dev.ratelimit.api.RateLimiterUnavailableException}.
         *
         * @param commandTimeout a positive duration, typically a few hundred milliseconds
         * @return this builder
         */
        public Builder commandTimeout(Duration commandTimeout) {
            Objects.requireNonNull(commandTimeout, "commandTimeout must not be null");
            if (commandTimeout.isNegative() || commandTimeout.isZero()) {
                throw new IllegalArgumentException("commandTimeout must be positive, was " + commandTimeout);
            }
            this.commandTimeout = commandTimeout;
            return this;
        }

        /**
         * Sets how long a check waits for the store's connection while it is being opened (from the
         * store's creation, or after a failed attempt) before failing with {@link
         * dev.ratelimit.api.RateLimiterUnavailableException}; a cluster connection first discovers
         * the topology and connects to every master, which takes longer than one command.
         *
         * @param connectTimeout a positive duration
         * @return this builder
         */
        public Builder connectTimeout(Duration connectTimeout) {
            Objects.requireNonNull(connectTimeout, "connectTimeout must not be null");
            if (connectTimeout.isNegative() || connectTimeout.isZero()) {
                throw new IllegalArgumentException("connectTimeout must be positive, was " + connectTimeout);
            }
            this.connectTimeout = connectTimeout;
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
         * Adjusts the client's options for failing fast and returns the store once its first
         * connection attempt has settled or the connect timeout has passed (a Redis that is down now
         * is retried by later checks).
         *
         * @return the store; it also implements {@link AutoCloseable}
         * @throws IllegalStateException if Redis refuses the client's credentials, its user lacks a
         *     permission the store needs, or Redis cannot run the script
         */
        public CloseableWindowStore build() {
            if (client != null) {
                RedisClient standalone = client;
                // The store replaces a closed connection itself, at once: Lettuce's reconnection backs off.
                standalone.setOptions(failFast(standalone.getOptions().mutate())
                        .autoReconnect(false)
                        .build());
                return started(new LettuceStore(
                        new KeySpace(KeyLayout.STANDALONE, keyPrefix),
                        commandTimeout,
                        connectTimeout,
                        () -> LettuceConnection.Connected.of(standalone.connect(StringCodec.UTF8)),
                        true));
            }
            RedisClusterClient cluster = Objects.requireNonNull(clusterClient);
            ClusterClientOptions.Builder options = ClusterClientOptions.builder(cluster.getOptions());
            failFast(options)
                    .autoReconnect(true)
                    // after a failover, learn the new master from the first failed reconnects or redirects
                    .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                            .enableAllAdaptiveRefreshTriggers()
                            .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                            .refreshTriggersReconnectAttempts(1)
                            .build());
            cluster.setOptions(options.build());
            return started(new LettuceStore(
                    new KeySpace(KeyLayout.CLUSTER, keyPrefix),
                    commandTimeout,
                    connectTimeout,
                    () -> LettuceConnection.Connected.ofCluster(cluster.connect(StringCodec.UTF8)),
                    false));
        }

        /**
         * Starts connecting in the background and waits for that first attempt up to the connect
         * timeout: a misconfigured deployment fails here, while a Redis that is down is retried by
         * later checks, so creating a store needs no live Redis.
         */
        private static CloseableWindowStore started(LettuceStore store) {
            store.connectEagerly();
            store.awaitStartupCheck();
            return store;
        }

        private static <B extends ClientOptions.Builder> B failFast(B options) {
            options.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    .timeoutOptions(TimeoutOptions.enabled());
            return options;
        }
    }
}
