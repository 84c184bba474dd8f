package dev.ratelimit.testsupport.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A private Sentinel-managed primary for tests: a primary, one replica of it, and one {@code
 * redis-server --sentinel} watching them with a generated config (quorum 1, the primary judged down
 * after one second). {@link #killPrimary()} kills the primary; Sentinel then promotes the replica.
 *
 * <pre>{@code
 * try (RedisSentinel sentinel = RedisSentinel.start()) {
 *     RedisURI uri = RedisURI.Builder.sentinel(RedisServer.HOST, sentinel.sentinelPort(), RedisSentinel.MASTER_NAME).build();
 *     ...
 * }
 * }</pre>
 */
public final class RedisSentinel implements AutoCloseable {

    /** The name Sentinel monitors the primary under. */
    public static final String MASTER_NAME = "ratelimit-primary";

    private static final Duration FAILOVER_TIMEOUT = Duration.ofSeconds(60);

    private final List<RedisServer> servers;
    private final RedisServer sentinel;

    private RedisSentinel(List<RedisServer> servers, RedisServer sentinel) {
        this.servers = servers;
        this.sentinel = sentinel;
    }

    /**
     * Starts a primary with {@code extraArguments}, a replica with the same arguments, and a
     * Sentinel, and waits until the replica is in sync and Sentinel sees both.
     *
     * @param extraArguments arguments of both data servers, such as AOF settings
     * @return the running deployment
     */
    public static RedisSentinel start(List<String> extraArguments) {
        Objects.requireNonNull(extraArguments, "extraArguments must not be null");
        List<RedisServer> servers = new ArrayList<>();
        RedisServer sentinel = null;
        try {
            RedisServer primary = RedisServer.start(extraArguments);
            servers.add(primary);
            List<String> replicaArguments = new ArrayList<>(extraArguments);
            replicaArguments.addAll(List.of("--replicaof", RedisServer.HOST, Integer.toString(primary.port())));
            RedisServer replica = RedisServer.start(replicaArguments);
            servers.add(replica);
            awaitInSync(replica);
            sentinel = RedisServer.startSentinel(List.of(
                    "sentinel monitor " + MASTER_NAME + " " + RedisServer.HOST + " " + primary.port() + " 1",
                    "sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
                    "sentinel failover-timeout " + MASTER_NAME + " 10000",
                    "sentinel parallel-syncs " + MASTER_NAME + " 1"));
            RedisSentinel started = new RedisSentinel(servers, sentinel);
            started.awaitReplicaKnown();
            return started;
        } catch (RuntimeException e) {
            servers.forEach(RedisServer::close);
            if (sentinel != null) {
                sentinel.close();
            }
            throw e;
        }
    }

    /**
     * Returns the Sentinel's port.
     *
     * @return the port
     */
    public int sentinelPort() {
        return sentinel.port();
    }

    /**
     * Returns the data servers: the first primary, then its replica.
     *
     * @return both servers, in start order
     */
    public List<RedisServer> servers() {
        return List.copyOf(servers);
    }

    /**
     * Returns the server Sentinel names as the primary now.
     *
     * @return the current primary
     */
    public RedisServer primary() {
        Object reply = sentinel.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        if (reply instanceof List<?> address && address.size() == 2) {
            int port = Integer.parseInt(String.valueOf(address.get(1)));
            for (RedisServer server : servers) {
                if (server.port() == port) {
                    return server;
                }
            }
        }
        throw new IllegalStateException("Sentinel names no known primary: " + reply);
    }

    /**
     * Kills the current primary and returns once Sentinel names the other server as primary and it
     * accepts writes.
     *
     * @return the server promoted
     * @throws IllegalStateException if no failover happens within a minute
     */
    public RedisServer killPrimary() {
        RedisServer old = primary();
        old.kill();
        long deadline = System.nanoTime() + FAILOVER_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                RedisServer current = primary();
                if (current != old && "master".equals(role(current))) {
                    return current;
                }
            } catch (RuntimeException e) {
                // Sentinel is between states
            }
            RedisServer.sleep(50);
        }
        throw new IllegalStateException("Sentinel did not promote the replica within " + FAILOVER_TIMEOUT);
    }

    /** Stops every process and deletes their files. */
    @Override
    public void close() {
        sentinel.close();
        servers.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "RedisSentinel{sentinel=" + sentinel.port() + ", servers=" + servers + "}";
    }

    private static String role(RedisServer server) {
        Object reply = server.call("ROLE");
        return reply instanceof List<?> role && !role.isEmpty() ? String.valueOf(role.get(0)) : "";
    }

    static void awaitInSync(RedisServer replica) {
        long deadline = System.nanoTime() + FAILOVER_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            Object info = replica.call("INFO", "replication");
            if (info instanceof String text && text.contains("master_link_status:up")) {
                return;
            }
            RedisServer.sleep(50);
        }
        throw new IllegalStateException("Replica on port " + replica.port() + " did not sync with its primary");
    }

    private void awaitReplicaKnown() {
        long deadline = System.nanoTime() + FAILOVER_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            Object replicas = sentinel.call("SENTINEL", "REPLICAS", MASTER_NAME);
            if (replicas instanceof List<?> list && !list.isEmpty()) {
                return;
            }
            RedisServer.sleep(50);
        }
        throw new IllegalStateException("Sentinel did not discover the replica");
    }
}
