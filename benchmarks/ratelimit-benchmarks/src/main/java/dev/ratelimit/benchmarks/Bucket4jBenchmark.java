package dev.ratelimit.benchmarks;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** Peer: Bucket4j's Lettuce proxy manager, one token per decision, same limits as ours. */
@State(Scope.Benchmark)
public class Bucket4jBenchmark extends WorkloadState {

    private BucketProxy[] buckets = new BucketProxy[0];
    private @Nullable RedisClient client;
    private @Nullable StatefulRedisConnection<String, byte[]> connection;

    /** Empties Redis and builds one bucket proxy per user (proxies are local objects, no I/O). */
    @Setup(Level.Trial)
    public void setUp() {
        prepareRedisWorkload();
        RedisClient created = BenchRedis.lettuce();
        client = created;
        StatefulRedisConnection<String, byte[]> opened = Peers.bucket4jConnection(created);
        connection = opened;
        ProxyManager<String> proxies = Peers.bucket4j(opened);
        BucketConfiguration configuration = Peers.bucketConfiguration(checked);
        buckets = new BucketProxy[Workload.USERS];
        for (int i = 0; i < Workload.USERS; i++) {
            buckets[i] = proxies.builder().build("bucket4j:" + Workload.user(i), () -> configuration);
        }
    }

    /** Closes the connection and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("Bucket4j", 0);
        if (connection != null) {
            connection.close();
        }
        if (client != null) {
            client.shutdown();
        }
    }

    /**
     * Consumes one token and waits for the answer.
     *
     * @return whether the token was consumed
     */
    @Benchmark
    public boolean blocking() {
        boolean consumed =
                Objects.requireNonNull(buckets[Workload.next(contended)]).tryConsume(1);
        if (!consumed) {
            rejected.increment();
        }
        return consumed;
    }
}
