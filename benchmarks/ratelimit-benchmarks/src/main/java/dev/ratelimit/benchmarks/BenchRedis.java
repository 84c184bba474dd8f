package dev.ratelimit.benchmarks;

import dev.ratelimit.redis.internal.SlidingWindowScript;
import dev.ratelimit.testsupport.redis.RespClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;

/**
 * The private Redis a benchmark fork talks to: the runner passes its port in a system property, and
 * forks refuse to run without one (so no benchmark ever touches a shared Redis such as port 6379).
 */
final class BenchRedis {

    /** The system property carrying the private server's port. */
    static final String PORT_PROPERTY = "ratelimit.bench.redis.port";

    /** The system property naming the file forks append their outcome counts to. */
    static final String OUTCOMES_PROPERTY = "ratelimit.bench.outcomes";

    /** The host of the private server. */
    static final String HOST = "127.0.0.1";

    /** Connections per pooled client: the 8 benchmark threads never wait for one. */
    static final int POOL_SIZE = 16;

    /** How many asynchronous checks are kept in flight by the asynchronous benchmarks. */
    static final int IN_FLIGHT = 64;

    private BenchRedis() {}

    static int port() {
        String value = System.getProperty(PORT_PROPERTY);
        if (value == null || value.isBlank()) {
            throw new IllegalStateException("Run through BenchmarkRunner: system property " + PORT_PROPERTY
                    + " (the private redis-server's port) is not set");
        }
        int port = Integer.parseInt(value.trim());
        if (port == 6379) {
            throw new IllegalStateException("Refusing to benchmark against port 6379, the shared Redis");
        }
        return port;
    }

    static String uri() {
        return "redis://" + HOST + ":" + port();
    }

    /** Empties the private server and loads the script, so every trial starts from the same state. */
    static void reset() {
        try (RespClient client = RespClient.connect(HOST, port(), Duration.ofSeconds(30))) {
            client.call("FLUSHALL");
            client.call("SCRIPT", "LOAD", SlidingWindowScript.source());
        }
    }

    /** Returns a new Lettuce client of the private server; the caller shuts it down. */
    static io.lettuce.core.RedisClient lettuce() {
        return io.lettuce.core.RedisClient.create(uri());
    }

    /** Returns a pooled Jedis client sized for the benchmark threads, with bounded waits. */
    static RedisClient jedis() {
        GenericObjectPoolConfig<Connection> pool = new ConnectionPoolConfig();
        pool.setMaxTotal(POOL_SIZE);
        pool.setMaxIdle(POOL_SIZE);
        pool.setMinIdle(POOL_SIZE);
        pool.setMaxWait(Duration.ofSeconds(2));
        return RedisClient.builder()
                .hostAndPort(HOST, port())
                .clientConfig(
                        DefaultJedisClientConfig.builder().timeoutMillis(2_000).build())
                .poolConfig(pool)
                .build();
    }

    /**
     * Appends one line of outcome counts for a finished trial, so the report can show that the
     * decisions measured were allowed ones and that none failed.
     */
    static void recordOutcomes(String benchmark, String params, long rejected, long failed) {
        String file = System.getProperty(OUTCOMES_PROPERTY);
        if (file == null || file.isBlank()) {
            return;
        }
        String line = benchmark + "\t" + params + "\t" + rejected + "\t" + failed + "\n";
        try {
            Files.writeString(
                    Path.of(file), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
