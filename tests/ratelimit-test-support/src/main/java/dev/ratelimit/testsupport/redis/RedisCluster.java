package dev.ratelimit.testsupport.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A private Redis Cluster of three masters (and, from {@link #startWithReplicas}, a replica each) for tests: three {@code redis-server
 * --cluster-enabled yes} processes joined by {@code redis-cli --cluster create}, returned once every
 * node reports {@code cluster_state:ok}. {@link #close()} stops all nodes and deletes their files.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start()) {
 *     RedisClusterClient client = RedisClusterClient.create(cluster.uris().get(0));
 *     ...
 * }
 * }</pre>
 */
public final class RedisCluster implements AutoCloseable {

    /** The number of masters. */
    public static final int MASTERS = 3;

    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);

    private final List<RedisServer> nodes;

    private RedisCluster(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /**
     * Starts three masters, assigns them all 16384 slots and waits until the cluster is ready.
     *
     * @return the running cluster
     * @throws IllegalStateException if the cluster cannot be formed
     */
    public static RedisCluster start() {
        return start(0, List.of());
    }

    /**
     * Starts three masters and one replica of each ({@code --cluster-replicas 1}), with a node
     * timeout of two seconds so a killed master's replica takes over within a few seconds, and
     * waits until every replica is in sync.
     *
     * @param extraArguments arguments of every node, such as AOF settings
     * @return the running cluster
     * @throws IllegalStateException if the cluster cannot be formed
     */
    public static RedisCluster startWithReplicas(List<String> extraArguments) {
        return start(1, extraArguments);
    }

    private static RedisCluster start(int replicas, List<String> extraArguments) {
        List<RedisServer> nodes = new ArrayList<>();
        try {
            for (int i = 0; i < MASTERS * (1 + replicas); i++) {
                List<String> arguments = new ArrayList<>(List.of(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", replicas > 0 ? "2000" : "5000",
                        "--cluster-replica-validity-factor", "0"));
                arguments.addAll(extraArguments);
                nodes.add(RedisServer.start(arguments, true));
            }
            create(nodes, replicas);
            RedisCluster cluster = new RedisCluster(nodes);
            cluster.awaitOk();
            for (RedisServer node : nodes) {
                Object role = node.call("ROLE");
                if (role instanceof List<?> list && "slave".equals(String.valueOf(list.get(0)))) {
                    RedisSentinel.awaitInSync(node);
                }
            }
            return cluster;
        } catch (RuntimeException e) {
            nodes.forEach(RedisServer::close);
            throw e;
        }
    }

    /**
     * Returns the nodes, all masters.
     *
     * @return the nodes in start order
     */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /**
     * Returns the nodes' ports.
     *
     * @return the ports in start order
     */
    public List<Integer> ports() {
        return nodes.stream().map(RedisServer::port).toList();
    }

    /**
     * Returns the nodes' URIs, any of which seeds a cluster client.
     *
     * @return the URIs in start order
     */
    public List<String> uris() {
        return nodes.stream().map(RedisServer::uri).toList();
    }

    /**
     * Returns the hash slot of a key, as the cluster computes it ({@code CLUSTER KEYSLOT}).
     *
     * @param key the key
     * @return the slot, 0 to 16383
     */
    public int slotOf(String key) {
        Objects.requireNonNull(key, "key must not be null");
        for (RedisServer node : nodes) {
            if (node.isRunning()) {
                return ((Long) Objects.requireNonNull(node.call("CLUSTER", "KEYSLOT", key))).intValue();
            }
        }
        throw new IllegalStateException("No node is running");
    }

    /**
     * Returns the node that serves a key's slot.
     *
     * @param key the key
     * @return the master owning the key's slot
     */
    public RedisServer nodeOf(String key) {
        int slot = slotOf(key);
        for (RedisServer node : nodes) {
            if (node.isRunning() && ownsSlot(node, slot)) {
                return node;
            }
        }
        throw new IllegalStateException("No node owns slot " + slot);
    }

    /** Stops every node and deletes their files. */
    @Override
    public void close() {
        nodes.forEach(RedisServer::close);
    }

    @Override
    public String toString() {
        return "RedisCluster" + uris();
    }

    private static boolean ownsSlot(RedisServer node, int slot) {
        Object slots = node.call("CLUSTER", "SLOTS");
        if (!(slots instanceof List<?> ranges)) {
            return false;
        }
        for (Object range : ranges) {
            List<?> entry = (List<?>) Objects.requireNonNull(range);
            long from = (Long) Objects.requireNonNull(entry.get(0));
            long to = (Long) Objects.requireNonNull(entry.get(1));
            List<?> master = (List<?>) Objects.requireNonNull(entry.get(2));
            long port = (Long) Objects.requireNonNull(master.get(1));
            if (slot >= from && slot <= to) {
                return port == node.port();
            }
        }
        return false;
    }

    /**
     * Returns the nodes that are masters now.
     *
     * @return the masters
     */
    public List<RedisServer> masters() {
        List<RedisServer> masters = new ArrayList<>();
        for (RedisServer node : nodes) {
            if (node.isRunning()) {
                Object role = node.call("ROLE");
                if (role instanceof List<?> list && "master".equals(String.valueOf(list.get(0)))) {
                    masters.add(node);
                }
            }
        }
        return masters;
    }

    /**
     * Kills the master that serves a key and returns once another node serves its slot.
     *
     * @param key a key of the slot whose master dies
     * @return the node promoted
     * @throws IllegalStateException if no replica takes over within a minute
     */
    public RedisServer killMasterOf(String key) {
        RedisServer old = nodeOf(key);
        int slot = slotOf(key);
        old.kill();
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            for (RedisServer node : nodes) {
                try {
                    if (node != old && node.isRunning() && ownsSlot(node, slot)) {
                        return node;
                    }
                } catch (RuntimeException e) {
                    // the node is busy with the failover
                }
            }
            RedisServer.sleep(50);
        }
        throw new IllegalStateException("No replica took over slot " + slot);
    }

    private static void create(List<RedisServer> nodes, int replicas) {
        List<String> command = new ArrayList<>();
        command.add(RedisServer.binary("REDIS_CLI", "redis-cli"));
        command.add("--cluster");
        command.add("create");
        for (RedisServer node : nodes) {
            command.add(RedisServer.HOST + ":" + node.port());
        }
        command.addAll(List.of("--cluster-replicas", Integer.toString(replicas), "--cluster-yes"));
        Path log = nodes.get(0).directory().resolve("cluster-create.log");
        try {
            Process process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(nullFile()))
                    .start();
            if (!process.waitFor(STARTUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("redis-cli --cluster create timed out: " + RedisServer.tail(log));
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException(
                        "redis-cli --cluster create failed (" + process.exitValue() + "): " + RedisServer.tail(log));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot run " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while creating the cluster", e);
        }
    }

    private static File nullFile() {
        return new File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }

    private void awaitOk() {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        @Nullable String last = null;
        while (System.nanoTime() < deadline) {
            boolean allOk = true;
            for (RedisServer node : nodes) {
                Object info;
                try {
                    info = node.call("CLUSTER", "INFO");
                } catch (RuntimeException e) {
                    info = e.toString();
                }
                last = node.port() + ": " + info;
                if (!(info instanceof String text) || !text.contains("cluster_state:ok")) {
                    allOk = false;
                    break;
                }
                if (!knowsAllMasters(node)) {
                    allOk = false;
                    last = node.port() + " does not see all masters in CLUSTER SLOTS yet";
                    break;
                }
            }
            if (allOk) {
                return;
            }
            RedisServer.sleep(50);
        }
        throw new IllegalStateException("Cluster did not reach cluster_state:ok: " + last);
    }

    private boolean knowsAllMasters(RedisServer node) {
        Object slots = node.call("CLUSTER", "SLOTS");
        if (!(slots instanceof List<?> ranges)) {
            return false;
        }
        Set<Long> ports = new HashSet<>();
        for (Object range : ranges) {
            List<?> entry = (List<?>) Objects.requireNonNull(range);
            List<?> master = (List<?>) Objects.requireNonNull(entry.get(2));
            ports.add((Long) Objects.requireNonNull(master.get(1)));
        }
        return ports.size() == MASTERS;
    }
}
