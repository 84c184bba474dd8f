package dev.ratelimit.faults;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.jedis.JedisWindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisCluster;
import dev.ratelimit.testsupport.redis.RedisSentinel;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisTls;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.UnifiedJedis;

/**
 * The two drivers, each building stores the way docs/redis-adapters.md recommends: a 500 ms command timeout,
 * Jedis pools bounded (64 connections, 200 ms wait) and cluster retries off.
 */
enum Driver {
    LETTUCE,
    JEDIS;

    /** The command timeout every store of these tests uses unless told otherwise. */
    static final Duration TIMEOUT = Duration.ofMillis(500);

    /** Credentials of a connection; {@code user} null for the {@code default} user. */
    record Credentials(@Nullable String user, String password) {}

    /**
     * Builds a store on a standalone server.
     *
     * @param port the port (plain, or TLS when {@code tls} is given)
     * @param credentials the user and password, or {@code null} for none
     * @param tls the certificates of a TLS port, or {@code null} for plain TCP
     * @param timeout the command timeout
     * @return the store; closing it closes its client
     */
    CloseableWindowStore standalone(
            int port, @Nullable Credentials credentials, @Nullable RedisTls tls, Duration timeout) {
        if (this == LETTUCE) {
            RedisURI.Builder uri = RedisURI.builder()
                    .withHost(RedisServer.HOST)
                    .withPort(port)
                    // the handshake (HELLO with AUTH) also runs within it: a loaded CI machine can take seconds
                    .withTimeout(Duration.ofSeconds(10));
            if (credentials != null) {
                if (credentials.user() == null) {
                    uri.withPassword(credentials.password().toCharArray());
                } else {
                    uri.withAuthentication(credentials.user(), credentials.password());
                }
            }
            RedisClient client = RedisClient.create(uri.withSsl(tls != null).build());
            if (tls != null) {
                client.setOptions(client.getOptions()
                        .mutate()
                        .sslOptions(SslOptions.builder()
                                .truststore(tls.trustStore().toFile(), RedisTls.TRUST_STORE_PASSWORD)
                                .build())
                        .build());
            }
            return lettuce(client, timeout);
        }
        DefaultJedisClientConfig.Builder config =
                DefaultJedisClientConfig.builder().timeoutMillis((int) timeout.toMillis());
        if (credentials != null) {
            config.user(credentials.user()).password(credentials.password());
        }
        if (tls != null) {
            config.ssl(true).sslSocketFactory(sslContext(tls).getSocketFactory());
        }
        return jedis(redis.clients.jedis.RedisClient.builder()
                .hostAndPort(RedisServer.HOST, port)
                .clientConfig(config.build())
                .poolConfig(pool())
                .build());
    }

    /**
     * Builds a store on a plain standalone server with the default timeout.
     *
     * @param server the server
     * @return the store
     */
    CloseableWindowStore standalone(RedisServer server) {
        return standalone(server.port(), null, null, TIMEOUT);
    }

    /**
     * Builds a store that follows the primary Sentinel names.
     *
     * @param sentinel the deployment
     * @return the store
     */
    CloseableWindowStore sentinel(RedisSentinel sentinel) {
        if (this == LETTUCE) {
            RedisClient client = RedisClient.create(
                    RedisURI.Builder.sentinel(RedisServer.HOST, sentinel.sentinelPort(), RedisSentinel.MASTER_NAME)
                            .withTimeout(Duration.ofSeconds(5))
                            .build());
            return lettuce(client, TIMEOUT);
        }
        JedisClientConfig config = DefaultJedisClientConfig.builder()
                .timeoutMillis((int) TIMEOUT.toMillis())
                .build();
        return jedis(new JedisSentineled(
                RedisSentinel.MASTER_NAME,
                config,
                pool(),
                Set.of(new HostAndPort(RedisServer.HOST, sentinel.sentinelPort())),
                DefaultJedisClientConfig.builder().timeoutMillis(2_000).build()));
    }

    /**
     * Builds a store on a cluster.
     *
     * @param cluster the cluster
     * @return the store
     */
    CloseableWindowStore cluster(RedisCluster cluster) {
        if (this == LETTUCE) {
            // the store's own client on the application's resources: it fails fast and follows failovers
            List<RedisURI> seeds =
                    cluster.uris().stream().map(uri -> RedisURI.create(uri)).toList();
            RedisClusterClient client = RedisClusterClient.create(seeds);
            CloseableWindowStore store = LettuceWindowStore.clusterBuilder(client.getResources(), seeds)
                    .commandTimeout(TIMEOUT)
                    .connectTimeout(Duration.ofSeconds(10))
                    .build();
            return new Closing(store, client::shutdown);
        }
        redis.clients.jedis.RedisClusterClient client = redis.clients.jedis.RedisClusterClient.builder()
                .nodes(cluster.nodes().stream()
                        .map(node -> new HostAndPort(node.host(), node.port()))
                        .collect(Collectors.toSet()))
                .maxAttempts(1)
                .clientConfig(DefaultJedisClientConfig.builder()
                        .timeoutMillis((int) TIMEOUT.toMillis())
                        .build())
                .poolConfig(pool())
                .build();
        return jedis(client);
    }

    /**
     * A store and the application's own command, on one client: the application's connection (Lettuce)
     * or pool (Jedis) is the client's, used as an application would, with the client's defaults.
     *
     * @param store the store, closing the client with it
     * @param application one command of the application's own, throwing when it fails
     */
    record Shared(CloseableWindowStore store, Callable<?> application) {}

    /**
     * Builds a store on a plain standalone server and gives the application's own command on the same
     * client.
     *
     * @param server the server
     * @return the store and the application's command
     */
    Shared sharedClient(RedisServer server) {
        if (this == LETTUCE) {
            RedisClient client = RedisClient.create(RedisURI.builder()
                    .withHost(RedisServer.HOST)
                    .withPort(server.port())
                    .withTimeout(Duration.ofSeconds(5))
                    .build());
            StatefulRedisConnection<String, String> own = client.connect();
            return new Shared(lettuce(client, TIMEOUT), () -> own.sync().set("application:key", "value"));
        }
        redis.clients.jedis.RedisClient client = redis.clients.jedis.RedisClient.builder()
                .hostAndPort(RedisServer.HOST, server.port())
                .clientConfig(DefaultJedisClientConfig.builder()
                        .timeoutMillis((int) TIMEOUT.toMillis())
                        .build())
                .poolConfig(pool())
                .build();
        return new Shared(jedis(client), () -> client.set("application:key", "value"));
    }

    private static CloseableWindowStore lettuce(RedisClient client, Duration timeout) {
        try {
            return new Closing(
                    LettuceWindowStore.builder(client)
                            .commandTimeout(timeout)
                            // a first connection can take seconds on a loaded CI machine
                            .connectTimeout(Duration.ofSeconds(10))
                            .build(),
                    client::shutdown);
        } catch (RuntimeException e) {
            client.shutdown();
            throw e;
        }
    }

    private static CloseableWindowStore jedis(UnifiedJedis client) {
        try {
            return new Closing(JedisWindowStore.create(client), client::close);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    static ConnectionPoolConfig pool() {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(64);
        pool.setMaxIdle(64);
        pool.setMaxWait(Duration.ofMillis(200));
        return pool;
    }

    static SSLContext sslContext(RedisTls tls) {
        try (InputStream in = new FileInputStream(tls.trustStore().toFile())) {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(in, RedisTls.TRUST_STORE_PASSWORD.toCharArray());
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(trust);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, factory.getTrustManagers(), null);
            return context;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A store that closes its client with it. */
    private record Closing(WindowStore store, Runnable closeClient) implements CloseableWindowStore {

        @Override
        public Evaluation evaluate(StoreRequest request) {
            return store.evaluate(request);
        }

        @Override
        public CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
            return store.evaluateAsync(request);
        }

        @Override
        public Evaluation peek(StoreRequest request) {
            return store.peek(request);
        }

        @Override
        public void settle(Settlement settlement) {
            store.settle(settlement);
        }

        @Override
        public CompletionStage<Void> settleAsync(Settlement settlement) {
            return store.settleAsync(settlement);
        }

        @Override
        public boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
            return store.renewLease(lease, entryId, nowMillis);
        }

        @Override
        public long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
            return store.leasesHeld(lease, nowMillis);
        }

        @Override
        public Evaluation takeLease(BudgetLease lease, long nowMillis) {
            return store.takeLease(lease, nowMillis);
        }

        @Override
        public Evaluation exchangeLease(
                BudgetLease returned,
                long stampMillis,
                long requestsUsed,
                Amounts used,
                BudgetLease taking,
                long nowMillis) {
            return store.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis);
        }

        @Override
        public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
            store.returnLease(lease, stampMillis, requestsUsed, used, nowMillis);
        }

        @Override
        public boolean atomicAcrossScopes() {
            return store.atomicAcrossScopes();
        }

        @Override
        public void close() {
            if (store instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    // the client's shutdown below closes what is left
                }
            }
            closeClient.run();
        }

        @Override
        public String toString() {
            return store.toString();
        }
    }
}
