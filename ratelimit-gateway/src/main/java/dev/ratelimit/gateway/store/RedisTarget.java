package dev.ratelimit.gateway.store;

import io.lettuce.core.RedisURI;
import io.lettuce.core.resource.ClientResources;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The Redis the gateway keeps its budgets, slots and cooldowns on: one server ({@code REDIS_URL})
 * or a Redis Cluster named by one or more of its nodes ({@code REDIS_CLUSTER_URL}, from which
 * Lettuce discovers the rest), and the one set of Lettuce client resources (event loops, timers)
 * that every client of the gateway on it shares.
 *
 * @param uris the server, or the cluster's seed nodes
 * @param cluster whether {@code uris} seed a cluster
 * @param resources the client resources the gateway's store created and shuts down last, or {@code
 *     null} when each client is to create its own (a target not from a {@link GatewayStore})
 */
public record RedisTarget(
        List<RedisURI> uris, boolean cluster, @Nullable ClientResources resources) {

    public RedisTarget {
        uris = List.copyOf(uris);
    }

    public RedisTarget(List<RedisURI> uris, boolean cluster) {
        this(uris, cluster, null);
    }

    /** The same Redis, its clients sharing {@code shared}. */
    RedisTarget sharing(ClientResources shared) {
        return new RedisTarget(uris, cluster, shared);
    }

    /**
     * The Redis the environment names, or {@code null} for this process's memory.
     *
     * @throws IllegalArgumentException when both variables are set, or one is not Redis URIs
     */
    public static @Nullable RedisTarget of(@Nullable String redisUrl, @Nullable String clusterUrl) {
        String standalone = redisUrl == null || redisUrl.isBlank() ? null : redisUrl.trim();
        String cluster = clusterUrl == null || clusterUrl.isBlank() ? null : clusterUrl.trim();
        if (standalone != null && cluster != null) {
            throw new IllegalArgumentException("REDIS_URL and REDIS_CLUSTER_URL are both set: set REDIS_URL for one"
                    + " Redis server or REDIS_CLUSTER_URL for a Redis Cluster, not both");
        }
        if (standalone != null) {
            return new RedisTarget(List.of(parse("REDIS_URL", standalone)), false);
        }
        if (cluster == null) {
            return null;
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String seed : cluster.split(",")) {
            if (seed.isBlank()) {
                continue;
            }
            RedisURI uri = parse("REDIS_CLUSTER_URL", seed.trim());
            if (uri.getDatabase() != 0) {
                throw new IllegalArgumentException("REDIS_CLUSTER_URL names database " + uri.getDatabase() + " in '"
                        + seed.trim() + "': a Redis Cluster has database 0 only");
            }
            seeds.add(uri);
        }
        if (seeds.isEmpty()) {
            throw new IllegalArgumentException("REDIS_CLUSTER_URL names no node: give one or more, separated by"
                    + " commas (redis://host1:port1,redis://host2:port2)");
        }
        return new RedisTarget(seeds, true);
    }

    private static RedisURI parse(String variable, String value) {
        try {
            return RedisURI.create(value);
        } catch (RuntimeException e) {
            String shape = variable.equals("REDIS_URL")
                    ? "redis://host:port"
                    : "redis://host1:port1,redis://host2:port2, the URIs of one or more cluster nodes";
            throw new IllegalArgumentException(
                    variable + " is not a Redis URI (" + shape + "): " + e.getMessage() + " in '" + value + "'", e);
        }
    }

    /** The server, for a standalone target. */
    RedisURI uri() {
        if (cluster) {
            throw new IllegalStateException("a cluster has seed nodes, not one server");
        }
        return uris.get(0);
    }

    /** Where it is, for descriptions and problems: {@code host:port[/db]}, the seeds comma-separated. */
    public String where() {
        return uris.stream()
                .map(uri ->
                        uri.getHost() + ":" + uri.getPort() + (uri.getDatabase() != 0 ? "/" + uri.getDatabase() : ""))
                .collect(Collectors.joining(","));
    }
}
