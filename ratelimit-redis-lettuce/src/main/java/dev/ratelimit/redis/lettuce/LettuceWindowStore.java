package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisKeys;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
 * RateLimiter clustered = SlidingWindowRateLimiter.builder(
 *         LettuceWindowStore.clusterBuilder(cluster.getResources(), List.of(RedisURI.create("redis://node1:6379")))
 *                 .build())
 *         .build();
 * }</pre>
 *
 * <p>A store opens one connection of its own, in the background from its creation (and again on
 * a check after a failed attempt), so creating it needs no running Redis; all its checks, blocking
 * or asynchronous, share that connection (Lettuce pipelines concurrent commands on it). A blocking
 * check is the same single command awaited, for at most the {@linkplain Builder#commandTimeout
 * command timeout} ({@value #DEFAULT_COMMAND_TIMEOUT_MILLIS} ms by default).
 *
 * <p><b>What a store shares and what it owns.</b> A store never changes a client it is given: not
 * its options, not its other connections, and closing the store never shuts the client down.
 *
 * <ul>
 *   <li>{@link #builder(RedisClient)} (standalone or Sentinel): the store <em>shares</em> the
 *       client, with its {@code RedisURI}, {@code ClientResources} and {@code ClientOptions} (SSL,
 *       socket and protocol settings), and <em>owns</em> one connection it opens on it. What the
 *       store needs to fail fast it does on that connection only: it sets the command timeout on it;
 *       refuses a check at once while it is disconnected, whatever the client's {@code
 *       DisconnectedBehavior}; bounds each command by the command timeout itself when the client's
 *       {@code TimeoutOptions} would not; closes it at its first disconnect, so that the client's
 *       automatic reconnection can never re-send a check Redis may already have recorded, and opens
 *       a fresh one every 100 ms until Redis accepts it (Lettuce's reconnection backs off for
 *       seconds), so checks are exact again within moments of Redis accepting connections; a
 *       connection that answers {@code READONLY} (a primary demoted by a failover) is replaced too.
 *       The application's own connections on the same client keep the client's behaviour, automatic
 *       reconnection included. Closing the store closes its connection only.
 *   <li>{@link #builder(RedisClusterClient)}: the store <em>shares</em> the cluster client, its
 *       topology and options, and <em>owns</em> one cluster connection (and the node connections
 *       Lettuce opens under it). Node connections behave as the client's options say: with Lettuce's
 *       defaults a check for a master that is down waits up to the command timeout instead of failing
 *       at once, a check in flight when a node connection drops is re-sent once it reconnects, and a
 *       failover's new master is found only if the client refreshes its topology (for
 *       instance adaptive refresh). Closing the store closes its cluster connection only.
 *   <li>{@link #clusterBuilder(ClientResources, Iterable)}: the store <em>owns</em> a {@code
 *       RedisClusterClient} it creates on the seed URIs, with its own options (commands rejected at
 *       once while a node is disconnected, command timeouts, adaptive topology refresh so a
 *       failover's new master is found), and <em>shares</em> only the
 *       caller's {@code ClientResources} (event loops, timers, DNS resolver). Closing the store shuts
 *       its client down; the resources are never shut down by the store.
 * </ul>
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
 * closing one closes what it owns, never a client or resources it was given.
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
     * @param client the client; the store opens its own connection on it and never changes it
     * @return the store; it connects in the background, and needs no running Redis to be created
     */
    public static CloseableWindowStore create(RedisClient client) {
        return builder(client).build();
    }

    /**
     * Creates a store over Redis Cluster with the default command timeout; all windows of a user
     * share one hash slot.
     *
     * @param client the cluster client; the store opens its own cluster connection on it and never
     *     changes it
     * @return the store; it connects in the background, and needs no running Redis to be created
     */
    public static CloseableWindowStore create(RedisClusterClient client) {
        return builder(client).build();
    }

    /**
     * Returns a builder of a store over a standalone Redis (or a Sentinel-managed master) that opens
     * its own connection on the caller's client, sharing the client and never changing it (see the
     * class documentation for what the store does on its connection).
     *
     * @param client the client; the caller keeps owning it and shuts it down
     * @return a new builder
     */
    public static Builder builder(RedisClient client) {
        return new Builder(Objects.requireNonNull(client, "client must not be null"), null, null, null);
    }

    /**
     * Returns a builder of a store over Redis Cluster that opens its own cluster connection on the
     * caller's client, sharing the client, its topology and options and never changing them; use
     * {@link #clusterBuilder(ClientResources, Iterable)} for a store that fails fast and follows
     * failovers whatever the application's client options are.
     *
     * @param client the cluster client; the caller keeps owning it and shuts it down
     * @return a new builder
     */
    public static Builder builder(RedisClusterClient client) {
        return new Builder(null, Objects.requireNonNull(client, "client must not be null"), null, null);
    }

    /**
     * Returns the options a store gives a cluster client it owns ({@link #clusterBuilder}): commands
     * refused at once while a node is disconnected, commands bounded by their timeout, and adaptive
     * topology refresh, so that a failover's new master is learnt from the first failed reconnects or
     * redirects. For an application that creates a cluster client for the store itself and wants it
     * to behave the same; a client given to {@link #builder(RedisClusterClient)} is never changed.
     *
     * @return new options
     */
    public static ClusterClientOptions clusterClientOptions() {
        return ClusterClientOptions.builder()
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled())
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofSeconds(1))
                        .refreshTriggersReconnectAttempts(1)
                        .build())
                .build();
    }

    /**
     * Returns a builder of a store over Redis Cluster that creates and owns its own {@code
     * RedisClusterClient} on the caller's resources: commands rejected at once while a node is
     * disconnected, command timeouts, adaptive topology refresh; closing the store shuts that client
     * down and leaves the resources running.
     *
     * @param resources the resources the store's client runs on (for instance {@code
     *     client.getResources()} of the application's client); the caller keeps owning them
     * @param seeds the URIs of one or more cluster nodes, with the credentials and TLS settings to use
     * @return a new builder
     */
    public static Builder clusterBuilder(ClientResources resources, Iterable<RedisURI> seeds) {
        Objects.requireNonNull(resources, "resources must not be null");
        Objects.requireNonNull(seeds, "seeds must not be null");
        List<RedisURI> nodes = new ArrayList<>();
        for (RedisURI seed : seeds) {
            nodes.add(Objects.requireNonNull(seed, "seeds must not contain null"));
        }
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("seeds must name at least one cluster node");
        }
        return new Builder(null, null, resources, List.copyOf(nodes));
    }

    /** Builds a Lettuce store; not thread-safe. */
    public static final class Builder {

        private final @Nullable RedisClient client;
        private final @Nullable RedisClusterClient clusterClient;
        private final @Nullable ClientResources resources;
        private final @Nullable List<RedisURI> seeds;
        private Duration commandTimeout = Duration.ofMillis(DEFAULT_COMMAND_TIMEOUT_MILLIS);
        private Duration connectTimeout = Duration.ofMillis(DEFAULT_CONNECT_TIMEOUT_MILLIS);
        private String keyPrefix = KeySpace.DEFAULT_PREFIX;
        private @Nullable Executor completions;

        private Builder(
                @Nullable RedisClient client,
                @Nullable RedisClusterClient clusterClient,
                @Nullable ClientResources resources,
                @Nullable List<RedisURI> seeds) {
            this.client = client;
            this.clusterClient = clusterClient;
            this.resources = resources;
            this.seeds = seeds;
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
         * Sets where the stages of the store's asynchronous evaluations complete (the limiter's
         * {@code checkAsync} and {@code reserveAsync}, and whatever the caller chains to them). By
         * default they complete on the Lettuce I/O thread that read Redis's answer, which costs no
         * hand-off, but while the work chained to one answer runs there, the answers behind it on
         * that connection wait, and may pass the command timeout when that work is slow (a JVM that
         * has just started runs it interpreted). Give an executor when the caller goes on with real
         * work once the store has answered, as a server going on with a request does. Settlements
         * still complete on the I/O thread (a blocking {@code commit} waits for them, perhaps on a
         * thread of this executor), and the blocking calls do not use it. The store never shuts it
         * down.
         *
         * @param executor where the asynchronous evaluations' stages complete
         * @return this builder
         */
        public Builder completeAsyncOn(Executor executor) {
            this.completions = Objects.requireNonNull(executor, "executor must not be null");
            return this;
        }

        /**
         * Returns the store once its first connection attempt has settled or the connect timeout has
         * passed (a Redis that is down now is retried by later checks); a client the caller gave is
         * left as it was.
         *
         * @return the store; it also implements {@link AutoCloseable}
         * @throws IllegalStateException if Redis refuses the client's credentials, its user lacks a
         *     permission the store needs, or Redis cannot run the script
         */
        public CloseableWindowStore build() {
            if (client != null) {
                RedisClient standalone = client;
                return started(new LettuceStore(
                        new KeySpace(KeyLayout.STANDALONE, keyPrefix),
                        commandTimeout,
                        connectTimeout,
                        () -> LettuceConnection.Connected.of(standalone.connect(StringCodec.UTF8)),
                        true,
                        completions,
                        () -> {}));
            }
            if (clusterClient != null) {
                RedisClusterClient cluster = clusterClient;
                return clusterStore(cluster, () -> {});
            }
            // a client of the store's own, on the caller's resources: its options are the store's to set
            RedisClusterClient owned =
                    RedisClusterClient.create(Objects.requireNonNull(resources), Objects.requireNonNull(seeds));
            owned.setOptions(clusterClientOptions());
            try {
                return clusterStore(owned, () -> shutdown(owned));
            } catch (RuntimeException e) {
                shutdown(owned);
                throw e;
            }
        }

        /**
         * Shuts down a client of the store's own within a bound: Lettuce's {@code shutdown} waits
         * without one, and a client whose server went away mid-close has been seen never to return.
         */
        private static void shutdown(RedisClusterClient owned) {
            try {
                owned.shutdownAsync(0, 2, TimeUnit.SECONDS).get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (ExecutionException | TimeoutException e) {
                System.getLogger(LettuceWindowStore.class.getName())
                        .log(System.Logger.Level.WARNING, "the store's Redis client did not shut down within 5 s", e);
            }
        }

        private CloseableWindowStore clusterStore(RedisClusterClient cluster, Runnable onClose) {
            return started(new LettuceStore(
                    new KeySpace(KeyLayout.CLUSTER, keyPrefix),
                    commandTimeout,
                    connectTimeout,
                    () -> LettuceConnection.Connected.ofCluster(cluster.connect(StringCodec.UTF8)),
                    false,
                    completions,
                    onClose));
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
    }
}
