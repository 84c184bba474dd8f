package dev.ratelimit.gateway.store;

import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.gateway.admission.Slots;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The store the gateway's budgets live in: in-memory by default, Redis through Lettuce when {@code
 * REDIS_URL} is set, a Redis Cluster when {@code REDIS_CLUSTER_URL} is. The gateway creates and
 * closes the store's client. The concurrency slots are leases in this store, taken and released in
 * the reservation's own store calls ({@link Slots}).
 *
 * <p>On a cluster each level of a request (the tenant, its team, its organisation, an upstream cap,
 * a share) hashes to a slot of its own, so the limiter reserves them scope by scope, one script call
 * each, as the library does for shared budgets on a cluster.
 */
public final class GatewayStore implements AutoCloseable {

    /** How long the start's reachability check waits for the cluster's masters. */
    private static final Duration START_PROBE = Duration.ofSeconds(5);
    /** How long a health check waits for the cluster's masters to answer. */
    private static final Duration HEALTH_PROBE = Duration.ofSeconds(2);

    private final WindowStore store;
    private final String kind;
    private final String description;
    private final @Nullable AutoCloseable resources;
    private final @Nullable RedisTarget redis;
    private final @Nullable Masters masters;

    private GatewayStore(
            WindowStore store,
            String kind,
            String description,
            @Nullable AutoCloseable resources,
            @Nullable RedisTarget redis,
            @Nullable Masters masters) {
        this.store = store;
        this.redis = redis;
        this.kind = kind;
        this.description = description;
        this.resources = resources;
        this.masters = masters;
    }

    /**
     * The store of the Redis the environment names ({@link RedisTarget#of}), or this process's memory.
     *
     * @param timeout the store's command timeout ({@code limits.store-timeout-ms})
     * @param work where a Redis store's asynchronous calls complete, off the client's I/O threads
     * @throws IllegalArgumentException when the variables name no valid Redis, or both are set
     */
    public static GatewayStore select(
            @Nullable String redisUrl, @Nullable String clusterUrl, Duration timeout, Executor work) {
        RedisTarget redis = RedisTarget.of(redisUrl, clusterUrl);
        if (redis == null) {
            return new GatewayStore(
                    InMemoryWindowStore.create(),
                    "in-memory",
                    "in-memory (embedded, this process only; set REDIS_URL=redis://127.0.0.1:6379 to use Redis)",
                    null,
                    null,
                    null);
        }
        // one set of event loops and timers for every Lettuce client of the gateway: the store's and
        // those of its cooldowns, managed keys and batches, which are closed before the store
        ClientResources resources = DefaultClientResources.create();
        RedisTarget shared = redis.sharing(resources);
        try {
            return shared.cluster()
                    ? cluster(shared, resources, timeout, work)
                    : standalone(shared, resources, timeout, work);
        } catch (RuntimeException e) {
            shutdown(resources);
            throw e;
        }
    }

    private static GatewayStore standalone(
            RedisTarget redis, ClientResources resources, Duration timeout, Executor work) {
        RedisClient client = RedisClient.create(resources, redis.uri());
        CloseableWindowStore store = LettuceWindowStore.builder(client)
                .commandTimeout(timeout)
                .completeAsyncOn(work)
                .build();
        String description = "redis at " + redis.where() + " (Lettuce, Redis server time), " + probe(client);
        return new GatewayStore(
                store,
                "redis",
                description,
                () -> {
                    try {
                        store.close();
                    } finally {
                        shutdown(client);
                        shutdown(resources);
                    }
                },
                redis,
                null);
    }

    /**
     * A store on a client of the gateway's own, with the options the library gives a cluster client
     * it owns: commands refused at once while a node is disconnected, bounded commands, and adaptive
     * topology refresh, so a failover's new master is found.
     */
    private static GatewayStore cluster(RedisTarget redis, ClientResources resources, Duration timeout, Executor work) {
        RedisClusterClient client = RedisClusterClient.create(resources, redis.uris());
        client.setOptions(LettuceWindowStore.clusterClientOptions());
        CloseableWindowStore store;
        try {
            store = LettuceWindowStore.builder(client)
                    .commandTimeout(timeout)
                    .completeAsyncOn(work)
                    .build();
        } catch (RuntimeException e) {
            shutdown(client);
            throw e;
        }
        Masters masters = new Masters(client);
        String problem = masters.problem(START_PROBE);
        String description = "redis cluster seeded by " + redis.where() + " (Lettuce, Redis server time), "
                + (problem == null
                        ? "reachable, " + masters.count() + " masters"
                        : "NOT reachable now (" + problem + "): requests pass unlimited (ratelimit_fail_open=1)"
                                + " until it is");
        return new GatewayStore(
                store,
                "redis-cluster",
                description,
                () -> {
                    try {
                        store.close();
                        masters.close();
                    } finally {
                        shutdown(client);
                        shutdown(resources);
                    }
                },
                redis,
                masters);
    }

    /** Says whether Redis answers now; the gateway starts either way and fails open until it does. */
    private static String probe(RedisClient client) {
        try (StatefulRedisConnection<String, String> connection = client.connect()) {
            connection.sync().ping();
            return "reachable";
        } catch (RuntimeException e) {
            return "NOT reachable now: requests pass unlimited (ratelimit_fail_open=1) until it is";
        }
    }

    public WindowStore store() {
        return store;
    }

    /** The Redis when the store is Redis, for the concurrency slots' description and the cooldowns. */
    @Nullable
    public RedisTarget redis() {
        return redis;
    }

    public String kind() {
        return kind;
    }

    public String description() {
        return description;
    }

    /**
     * On a cluster, which masters do not answer a {@code PING} now, or {@code null} when all do; always
     * {@code null} otherwise. The health check's read through the limiter reaches one master only (the
     * slot of the user it reads), while every master holds some tenants' budgets.
     */
    @Nullable
    public String nodesProblem() {
        return masters == null ? null : masters.problem(HEALTH_PROBE);
    }

    @Override
    public void close() {
        if (resources != null) {
            try {
                resources.close();
            } catch (Exception e) {
                // shutting down anyway
            }
        }
    }

    /**
     * PINGs every master of the cluster on a connection of its own, opened on first use and again
     * after an attempt failed; the masters are those of the topology Lettuce knows now.
     */
    private static final class Masters implements AutoCloseable {

        private final RedisClusterClient client;
        private @Nullable CompletableFuture<StatefulRedisClusterConnection<String, String>> connection;
        private int count;
        private boolean closed;

        Masters(RedisClusterClient client) {
            this.client = client;
        }

        /** How many masters the last check found. */
        synchronized int count() {
            return count;
        }

        /** Null when every master answered within {@code wait}, else which did not and why. */
        synchronized @Nullable String problem(Duration wait) {
            if (closed) {
                return "closed";
            }
            long deadline = System.nanoTime() + wait.toNanos();
            CompletableFuture<StatefulRedisClusterConnection<String, String>> opening = connection;
            if (opening == null || opening.isCompletedExceptionally()) {
                opening = client.connectAsync(StringCodec.UTF8);
                connection = opening;
            }
            StatefulRedisClusterConnection<String, String> open;
            try {
                open = opening.get(wait.toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                return "no node of the cluster answers (" + reason(e) + ")";
            } catch (TimeoutException e) {
                return "no connection to the cluster within " + wait.toMillis() + " ms";
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
            Map<String, CompletableFuture<String>> pings = new LinkedHashMap<>();
            for (RedisClusterNode node : open.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    pings.put(
                            node.getUri().getHost() + ":" + node.getUri().getPort(),
                            open.getConnectionAsync(node.getNodeId())
                                    .thenCompose(master -> master.async().ping().toCompletableFuture()));
                }
            }
            count = pings.size();
            List<String> silent = new ArrayList<>();
            for (Map.Entry<String, CompletableFuture<String>> ping : pings.entrySet()) {
                try {
                    ping.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (ExecutionException e) {
                    silent.add(ping.getKey() + " (" + reason(e) + ")");
                } catch (TimeoutException e) {
                    silent.add(ping.getKey() + " (no answer within " + wait.toMillis() + " ms)");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return "interrupted";
                }
            }
            if (pings.isEmpty()) {
                return "the cluster has no master";
            }
            return silent.isEmpty() ? null : "cluster masters not answering PING: " + String.join(", ", silent);
        }

        private static String reason(ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return String.valueOf(cause.getMessage());
        }

        @Override
        public synchronized void close() {
            closed = true;
            CompletableFuture<StatefulRedisClusterConnection<String, String>> opening = connection;
            if (opening != null) {
                opening.thenAccept(StatefulRedisClusterConnection::close);
            }
        }
    }

    /**
     * Shuts a client of the gateway's own down, waiting at most 5 s: Lettuce's own {@code shutdown}
     * waits without a bound, and was seen never to return once its event loops had ended (a test's
     * gateway closed after its Redis stopped), which hung the gateway's stop.
     */
    static void shutdown(AbstractRedisClient client) {
        await(client.shutdownAsync(0, 2, TimeUnit.SECONDS), "the Redis client");
    }

    /** Shuts the shared client resources down, last, waiting at most 5 s as a client's shutdown does. */
    static void shutdown(ClientResources resources) {
        await(resources.shutdown(0, 2, TimeUnit.SECONDS), "the Redis client resources");
    }

    private static void await(java.util.concurrent.Future<?> shutdown, String what) {
        try {
            shutdown.get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            System.getLogger(GatewayStore.class.getName())
                    .log(System.Logger.Level.WARNING, what + " did not shut down within 5 s; going on", e);
        }
    }
}
