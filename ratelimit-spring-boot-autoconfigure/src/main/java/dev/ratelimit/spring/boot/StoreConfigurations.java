package dev.ratelimit.spring.boot;

import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.redis.jedis.JedisWindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.UnifiedJedis;

/** The three stores; the first whose condition matches creates the {@link WindowStore}. */
final class StoreConfigurations {

    private StoreConfigurations() {}

    /** Lettuce: the client of Spring Boot's Lettuce connection factory, or one built from spring.data.redis. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "dev.ratelimit.redis.lettuce.LettuceWindowStore",
                "io.lettuce.core.RedisClient",
                "org.springframework.boot.data.redis.autoconfigure.DataRedisProperties"
            })
    @Conditional(StoreCondition.Lettuce.class)
    @ConditionalOnMissingBean(WindowStore.class)
    static class Lettuce {

        @Bean
        RateLimitStoreInfo rateLimitStoreInfo() {
            return new RateLimitStoreInfo("lettuce", true);
        }

        /**
         * Reuses the client Spring Boot created, never changing it: the store opens its own connection
         * on it and closes only that, and the application's connections keep Spring Data Redis's
         * behaviour (automatic reconnection included).
         */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnBean(LettuceConnectionFactory.class)
        static class BootClient {

            @Bean
            CloseableWindowStore rateLimitWindowStore(
                    LettuceConnectionFactory connectionFactory, RateLimitProperties properties) {
                AbstractRedisClient client = connectionFactory.getRequiredNativeClient();
                if (client instanceof io.lettuce.core.RedisClient standalone) {
                    return lettuceStore(LettuceWindowStore.builder(standalone), properties);
                }
                if (client instanceof RedisClusterClient cluster) {
                    return lettuceStore(LettuceWindowStore.builder(cluster), properties);
                }
                throw new IllegalStateException(
                        "Unsupported Lettuce client " + client.getClass().getName());
            }
        }

        /** No Lettuce connection factory (Spring Data Redis runs on Jedis, or is not auto-configured). */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnMissingBean(LettuceConnectionFactory.class)
        static class OwnClient {

            @Bean(destroyMethod = "shutdown")
            AbstractRedisClient rateLimitLettuceClient(Environment environment, RateLimitProperties properties) {
                RedisSettings redis = RedisSettings.from(environment);
                if (!redis.clusterNodes().isEmpty()) {
                    // hosts the resources the store's own cluster client runs on (see rateLimitWindowStore)
                    return RedisClusterClient.create(clusterNodes(redis, properties));
                }
                RedisURI uri = uri(redis, redis.host(), redis.port(), properties);
                uri.setDatabase(redis.database());
                return io.lettuce.core.RedisClient.create(uri);
            }

            @Bean
            CloseableWindowStore rateLimitWindowStore(
                    AbstractRedisClient rateLimitLettuceClient,
                    Environment environment,
                    RateLimitProperties properties) {
                if (rateLimitLettuceClient instanceof RedisClusterClient cluster) {
                    // a client of the store's own, failing fast and following failovers, on the same resources
                    List<RedisURI> nodes = clusterNodes(RedisSettings.from(environment), properties);
                    return lettuceStore(LettuceWindowStore.clusterBuilder(cluster.getResources(), nodes), properties);
                }
                return lettuceStore(
                        LettuceWindowStore.builder((io.lettuce.core.RedisClient) rateLimitLettuceClient), properties);
            }

            private static Duration max(Duration a, Duration b) {
                return a.compareTo(b) >= 0 ? a : b;
            }

            private static List<RedisURI> clusterNodes(RedisSettings redis, RateLimitProperties properties) {
                return redis.clusterNodes().stream()
                        .map(node -> uri(redis, node.host(), node.port(), properties))
                        .toList();
            }

            private static RedisURI uri(RedisSettings redis, String host, int port, RateLimitProperties properties) {
                RedisURI.Builder uri = RedisURI.builder()
                        .withHost(host)
                        .withPort(port)
                        .withSsl(redis.ssl())
                        // bounds the connection handshake, which on a cold JVM can take longer than one
                        // command; the store sets the command timeout on its own connection
                        .withTimeout(max(properties.getRedis().getCommandTimeout(), Duration.ofSeconds(2)));
                String password = redis.password();
                if (password != null) {
                    String username = redis.username();
                    if (username != null) {
                        uri.withAuthentication(username, password);
                    } else {
                        uri.withPassword(password.toCharArray());
                    }
                }
                return uri.build();
            }
        }

        private static CloseableWindowStore lettuceStore(
                LettuceWindowStore.Builder builder, RateLimitProperties properties) {
            return builder.commandTimeout(properties.getRedis().getCommandTimeout())
                    .keyPrefix(properties.getRedis().getKeyPrefix())
                    .build();
        }
    }

    /** Jedis: a pooled client built from spring.data.redis (Spring Data Redis's Jedis factory has no UnifiedJedis). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "dev.ratelimit.redis.jedis.JedisWindowStore",
                "redis.clients.jedis.UnifiedJedis",
                "org.springframework.boot.data.redis.autoconfigure.DataRedisProperties"
            })
    @Conditional(StoreCondition.Jedis.class)
    @ConditionalOnMissingBean(WindowStore.class)
    static class Jedis {

        @Bean
        RateLimitStoreInfo rateLimitStoreInfo() {
            return new RateLimitStoreInfo("jedis", false);
        }

        @Bean(destroyMethod = "close")
        UnifiedJedis rateLimitJedisClient(Environment environment, RateLimitProperties properties) {
            if (!ClassUtils.isPresent("redis.clients.jedis.RedisClient", Jedis.class.getClassLoader())) {
                throw new IllegalStateException("The ratelimit Jedis store needs Jedis 7.4 or later, which has"
                        + " redis.clients.jedis.RedisClient; found " + jedisVersion() + " (Spring Boot 4.0's BOM"
                        + " manages 7.0.0). Set the Maven property jedis.version to 7.4.1 under"
                        + " spring-boot-starter-parent (or manage redis.clients:jedis 7.4.1 ahead of Spring Boot's"
                        + " BOM): Spring Data Redis 4.0's JedisConnectionFactory is tested on it. Or use the Lettuce"
                        + " store, which runs on the Lettuce Spring Boot manages");
            }
            RedisSettings server = RedisSettings.from(environment);
            Duration timeout = properties.getRedis().getCommandTimeout();
            DefaultJedisClientConfig.Builder config = DefaultJedisClientConfig.builder()
                    .timeoutMillis((int) timeout.toMillis())
                    .connectionTimeoutMillis((int) Math.max(timeout.toMillis(), 2_000))
                    .ssl(server.ssl())
                    .user(server.username())
                    .password(server.password());
            // bounded: the pool's default waits forever for one of 8 connections
            ConnectionPoolConfig pool = new ConnectionPoolConfig();
            pool.setMaxTotal(64);
            pool.setMaxWait(Duration.ofMillis(200));
            if (!server.clusterNodes().isEmpty()) {
                Set<HostAndPort> nodes = new LinkedHashSet<>();
                server.clusterNodes().forEach(node -> nodes.add(new HostAndPort(node.host(), node.port())));
                // maxAttempts(1): a check that may have run must never be sent again
                return redis.clients.jedis.RedisClusterClient.builder()
                        .nodes(nodes)
                        .maxAttempts(1)
                        .clientConfig(config.build())
                        .poolConfig(pool)
                        .build();
            }
            return redis.clients.jedis.RedisClient.builder()
                    .hostAndPort(server.host(), server.port())
                    .clientConfig(config.database(server.database()).build())
                    .poolConfig(pool)
                    .build();
        }

        /** The Jedis found, from the properties file Jedis ships beside its classes. */
        private static String jedisVersion() {
            try (InputStream in = UnifiedJedis.class.getResourceAsStream("pom.properties")) {
                if (in != null) {
                    Properties properties = new Properties();
                    properties.load(in);
                    String version = properties.getProperty("version");
                    if (version != null) {
                        return "Jedis " + version;
                    }
                }
            } catch (IOException e) {
                // the version is only named in a message
            }
            return "an earlier Jedis";
        }

        @Bean
        WindowStore rateLimitWindowStore(UnifiedJedis rateLimitJedisClient, RateLimitProperties properties) {
            // a cluster client is recognised by its class
            return JedisWindowStore.builder(rateLimitJedisClient)
                    .keyPrefix(properties.getRedis().getKeyPrefix())
                    .build();
        }
    }

    /** In memory: one JVM's counts. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.ratelimit.inmemory.InMemoryWindowStore")
    @Conditional(StoreCondition.InMemory.class)
    @ConditionalOnMissingBean(WindowStore.class)
    static class InMemory {

        @Bean
        RateLimitStoreInfo rateLimitStoreInfo() {
            return new RateLimitStoreInfo("in-memory", true);
        }

        @Bean
        InMemoryWindowStore rateLimitWindowStore() {
            return InMemoryWindowStore.create();
        }
    }
}
