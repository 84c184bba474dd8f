package dev.ratelimit.redis.jedis;

import dev.ratelimit.testsupport.redis.RedisCluster;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisClusterClient;

/** Jedis clients configured as the documentation recommends: bounded pools, short timeouts, no cluster retries. */
final class JedisClients {

    private JedisClients() {}

    static ConnectionPoolConfig pool(int maxTotal, Duration maxWait) {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(maxTotal);
        pool.setMaxIdle(maxTotal);
        pool.setMaxWait(maxWait);
        pool.setBlockWhenExhausted(true);
        return pool;
    }

    static RedisClient standalone(String host, int port, Duration timeout, int maxTotal, Duration maxWait) {
        return RedisClient.builder()
                .hostAndPort(host, port)
                .clientConfig(DefaultJedisClientConfig.builder()
                        .timeoutMillis((int) timeout.toMillis())
                        .build())
                .poolConfig(pool(maxTotal, maxWait))
                .build();
    }

    static RedisClusterClient cluster(RedisCluster cluster, int maxTotal, Duration maxWait) {
        Set<HostAndPort> nodes = cluster.nodes().stream()
                .map(node -> new HostAndPort(node.host(), node.port()))
                .collect(Collectors.toSet());
        return RedisClusterClient.builder()
                .nodes(nodes)
                .maxAttempts(1)
                .clientConfig(
                        DefaultJedisClientConfig.builder().timeoutMillis(2_000).build())
                .poolConfig(pool(maxTotal, maxWait))
                .build();
    }
}
