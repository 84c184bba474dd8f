package dev.ratelimit.spring.boot;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.core.env.Environment;

/**
 * The Redis server of {@code spring.data.redis.*}, for a store that builds its own client: host,
 * port, credentials, SSL (with the JVM's trust store), database, or cluster nodes.
 */
record RedisSettings(
        String host,
        int port,
        @Nullable String username,
        @Nullable String password,
        boolean ssl,
        int database,
        List<HostPort> clusterNodes) {

    /** One {@code host:port} of {@code spring.data.redis.cluster.nodes}. */
    record HostPort(String host, int port) {}

    /** Reads {@code spring.data.redis.*}; rejects what a store-built client cannot honour. */
    static RedisSettings from(Environment environment) {
        DataRedisProperties redis = Binder.get(environment)
                .bind("spring.data.redis", DataRedisProperties.class)
                .orElseGet(DataRedisProperties::new);
        if (redis.getSentinel() != null) {
            throw new IllegalStateException("spring.data.redis.sentinel is set, but the ratelimit store only builds"
                    + " standalone and cluster clients: use ratelimit.store=lettuce with Spring Boot's Lettuce"
                    + " connection factory (its client is reused), or define a WindowStore bean");
        }
        if (redis.getSsl().getBundle() != null) {
            throw new IllegalStateException("spring.data.redis.ssl.bundle is set, but the ratelimit store builds its"
                    + " own client with the JVM's trust store only: use ratelimit.store=lettuce with Spring Boot's"
                    + " Lettuce connection factory (its client is reused), or define a WindowStore bean");
        }
        String host = redis.getHost();
        int port = redis.getPort();
        String username = redis.getUsername();
        String password = redis.getPassword();
        boolean ssl = redis.getSsl().isEnabled();
        int database = redis.getDatabase();
        String url = redis.getUrl();
        if (url != null) {
            URI uri = URI.create(url);
            if (!"redis".equals(uri.getScheme()) && !"rediss".equals(uri.getScheme())) {
                throw new IllegalArgumentException(
                        "spring.data.redis.url must start with redis:// or rediss://, was '" + url + "'");
            }
            ssl = "rediss".equals(uri.getScheme());
            host = uri.getHost();
            port = uri.getPort() == -1 ? 6379 : uri.getPort();
            String userInfo = uri.getRawUserInfo();
            if (userInfo != null) {
                int colon = userInfo.indexOf(':');
                if (colon < 0) {
                    password = decode(userInfo);
                } else {
                    String user = decode(userInfo.substring(0, colon));
                    username = user.isEmpty() ? null : user;
                    password = decode(userInfo.substring(colon + 1));
                }
            }
            String path = uri.getPath();
            if (path != null && path.length() > 1) {
                database = Integer.parseInt(path.substring(1));
            }
        }
        List<HostPort> nodes = new ArrayList<>();
        DataRedisProperties.Cluster cluster = redis.getCluster();
        List<String> clusterNodes = cluster == null ? null : cluster.getNodes();
        if (clusterNodes != null) {
            for (String node : clusterNodes) {
                int colon = node.lastIndexOf(':');
                if (colon <= 0) {
                    throw new IllegalArgumentException(
                            "spring.data.redis.cluster.nodes entries must be host:port, was '" + node + "'");
                }
                nodes.add(new HostPort(node.substring(0, colon), Integer.parseInt(node.substring(colon + 1))));
            }
        }
        return new RedisSettings(host, port, username, password, ssl, database, List.copyOf(nodes));
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
