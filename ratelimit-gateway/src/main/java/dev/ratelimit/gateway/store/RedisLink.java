package dev.ratelimit.gateway.store;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisException;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.protocol.ConnectionIntent;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A Lettuce client of the gateway's own (on the client resources every gateway client on that Redis
 * shares: {@link RedisTarget#resources()}) for state that its processes share beside the budgets
 * (upstream cooldowns, keys managed by the admin API): one connection for commands, opened on first
 * use and again after a failure (at most every {@link #RECONNECT_EVERY}), and one subscription to a
 * channel of announcements, after which the owner reads the state whole each time the subscription
 * (re)connects, since announcements made while it was away were missed. Commands are rejected at
 * once while Redis is unreachable (no queueing) and time out after {@link #COMMAND_TIMEOUT}; failures
 * are logged at most every 10 seconds.
 *
 * <p>On a Redis Cluster each key is read and written on its own master, and announcements go
 * through the cluster's pub/sub, which every node relays to its subscribers.
 */
public final class RedisLink implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RedisLink.class.getName());
    static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    /** How soon after a failed connection attempt the next one is made. */
    private static final Duration RECONNECT_EVERY = Duration.ofMillis(100);
    /** The least time between two warnings of a failing Redis: loud in the log, never a flood. */
    private static final long WARN_EVERY_NANOS = Duration.ofSeconds(10).toNanos();
    /** How soon after a failed subscription (Redis unreachable) the next attempt is made. */
    private static final Duration RESUBSCRIBE_EVERY = Duration.ofSeconds(1);

    private final AbstractRedisClient client;
    private final String what;
    private final String meanwhile;
    private final AtomicLong lastWarningNanos = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);
    private volatile @Nullable StatefulConnection<String, String> connection;
    private volatile @Nullable StatefulRedisPubSubConnection<String, String> subscription;
    private volatile long nextConnectNanos = System.nanoTime();
    private volatile boolean closed;

    /**
     * @param what what this link keeps, for the warning (such as "Upstream cooldowns")
     * @param meanwhile what the process does while Redis fails, for the warning
     */
    public RedisLink(RedisTarget redis, String what, String meanwhile) {
        this.client = redis.cluster() ? clusterClient(redis) : standaloneClient(redis);
        this.what = what;
        this.meanwhile = meanwhile;
    }

    private static RedisClient standaloneClient(RedisTarget redis) {
        ClientResources shared = redis.resources();
        RedisClient created =
                shared == null ? RedisClient.create(redis.uri()) : RedisClient.create(shared, redis.uri());
        created.setOptions(common(ClientOptions.builder()).build());
        return created;
    }

    /** The same options on a cluster client, and adaptive topology refresh to follow a failover. */
    private static RedisClusterClient clusterClient(RedisTarget redis) {
        ClientResources shared = redis.resources();
        RedisClusterClient created = shared == null
                ? RedisClusterClient.create(redis.uris())
                : RedisClusterClient.create(shared, redis.uris());
        created.setOptions(common(ClusterClientOptions.builder())
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enableAllAdaptiveRefreshTriggers()
                        .build())
                .build());
        return created;
    }

    /** Commands rejected at once while disconnected, and bounded by {@link #COMMAND_TIMEOUT}. */
    private static <B extends ClientOptions.Builder> B common(B builder) {
        builder.disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(
                        SocketOptions.builder().connectTimeout(COMMAND_TIMEOUT).build())
                .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT));
        return builder;
    }

    /**
     * Subscribes to {@code channel}: each message goes to {@code message} (on Lettuce's thread: keep
     * it short), and {@code connected} runs on a thread of its own each time the subscription
     * connects, and once when it is first made, to read what was announced while it was away.
     * Lettuce reconnects and resubscribes by itself (on one server or a cluster's node); a
     * subscription that cannot be made at all (Redis unreachable at start) is tried again every
     * second.
     */
    public void subscribe(String channel, Consumer<String> message, Runnable connected) {
        if (closed) {
            return;
        }
        StatefulRedisPubSubConnection<String, String> pubSub = null;
        try {
            pubSub = client instanceof RedisClusterClient cluster
                    ? cluster.connectPubSub()
                    : ((RedisClient) client).connectPubSub();
            pubSub.addListener(new RedisPubSubAdapter<String, String>() {
                @Override
                public void message(String from, String text) {
                    if (channel.equals(from)) {
                        message.accept(text);
                    }
                }
            });
            pubSub.addListener(new RedisConnectionStateListener() {
                @Override
                public void onRedisConnected(RedisChannelHandler<?, ?> handler, SocketAddress address) {
                    Thread reader = new Thread(connected, "ratelimit-redis-read");
                    reader.setDaemon(true);
                    reader.start();
                }
            });
            pubSub.sync().subscribe(channel);
            subscription = pubSub;
            connected.run();
        } catch (RedisException e) {
            // not subscribed (Redis unreachable at start, say): the owner goes by what it knows, and
            // subscribes once Redis answers
            failed(e);
            if (pubSub != null) {
                pubSub.closeAsync();
            }
            CompletableFuture.delayedExecutor(RESUBSCRIBE_EVERY.toMillis(), TimeUnit.MILLISECONDS)
                    .execute(() -> subscribe(channel, message, connected));
        }
    }

    /**
     * The connection for commands, or {@code null} while Redis cannot be reached (the last attempt
     * failed moments ago) or after {@link #close()}.
     */
    @Nullable
    StatefulConnection<String, String> connection() {
        if (closed) {
            return null;
        }
        StatefulConnection<String, String> current = connection;
        if (current != null) {
            return current;
        }
        synchronized (this) {
            if (connection == null) {
                if (System.nanoTime() - nextConnectNanos < 0) {
                    return null;
                }
                try {
                    connection = client instanceof RedisClusterClient cluster
                            ? withMasters(cluster.connect())
                            : ((RedisClient) client).connect();
                } catch (RedisException e) {
                    nextConnectNanos = System.nanoTime() + RECONNECT_EVERY.toNanos();
                    failed(e);
                    return null;
                }
            }
            return connection;
        }
    }

    /** The commands of {@link #connection()}, or {@code null} while Redis cannot be reached. */
    @Nullable
    public RedisClusterCommands<String, String> commands() {
        StatefulConnection<String, String> current = connection();
        return current == null ? null : commands(current);
    }

    /**
     * The commands of a connection: a cluster connection's route each key to its master (and send
     * {@code PUBLISH} to any node, which the cluster relays to every node's subscribers).
     */
    public static RedisClusterCommands<String, String> commands(StatefulConnection<String, String> connection) {
        return connection instanceof StatefulRedisClusterConnection<String, String> cluster
                ? cluster.sync()
                : ((StatefulRedisConnection<String, String>) connection).sync();
    }

    /**
     * Where a {@code SCAN} must look to see every key: the server, or each master of a cluster (the
     * masters of the topology Lettuce knows now), scanned one after the other on its node connection;
     * a {@code GET} then goes through the cluster connection, to the master of the key's slot.
     */
    static List<RedisClusterCommands<String, String>> keyspaces(StatefulConnection<String, String> connection) {
        if (!(connection instanceof StatefulRedisClusterConnection<String, String> cluster)) {
            return List.of(commands(connection));
        }
        List<RedisClusterCommands<String, String>> masters = new ArrayList<>();
        for (RedisClusterNode node : cluster.getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                masters.add(cluster.getConnection(node.getNodeId()).sync());
            }
        }
        return masters;
    }

    /**
     * Opens the cluster connection's connection to every master now, keyed as the routing of a key's
     * command looks it up (host, port, for writing): Lettuce opens one when the first command for its
     * slot is sent, and with commands rejected while disconnected that command would be rejected while
     * it is being opened.
     */
    private static StatefulRedisClusterConnection<String, String> withMasters(
            StatefulRedisClusterConnection<String, String> cluster) {
        for (RedisClusterNode node : cluster.getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                try {
                    cluster.getConnection(node.getUri().getHost(), node.getUri().getPort(), ConnectionIntent.WRITE);
                } catch (RuntimeException e) {
                    // that master is down: its keys' commands fail until Lettuce reaches it
                }
            }
        }
        return cluster;
    }

    /** Logs a failure, at most every 10 seconds. */
    public void failed(RedisException e) {
        long now = System.nanoTime();
        long last = lastWarningNanos.get();
        if (now - last >= WARN_EVERY_NANOS && lastWarningNanos.compareAndSet(last, now)) { // one of many threads
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0}: Redis failed ({1}); {2}",
                    what,
                    String.valueOf(e.getMessage()),
                    meanwhile);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        StatefulConnection<String, String> current = connection;
        if (current != null) {
            current.close();
        }
        StatefulRedisPubSubConnection<String, String> subscribed = subscription;
        if (subscribed != null) {
            subscribed.close();
        }
        GatewayStore.shutdown(client);
    }
}
