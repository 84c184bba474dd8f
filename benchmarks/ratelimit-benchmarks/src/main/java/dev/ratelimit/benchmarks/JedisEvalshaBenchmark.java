package dev.ratelimit.benchmarks;

import dev.ratelimit.redis.internal.SlidingWindowScript;
import java.util.Arrays;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import redis.clients.jedis.RedisClient;

/** The driver ceiling for Jedis: a plain pooled {@code EVALSHA} of our script, nothing else. */
@State(Scope.Benchmark)
public class JedisEvalshaBenchmark extends WorkloadState {

    private @org.jspecify.annotations.Nullable RedisClient jedis;

    /** Empties Redis, loads the script and opens the pool. */
    @Setup(Level.Trial)
    public void setUp() {
        prepareRedisWorkload();
        jedis = BenchRedis.jedis();
    }

    /** Closes the pool and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("JedisEvalsha", 0);
        if (jedis != null) {
            jedis.close();
        }
    }

    /**
     * Runs one {@code EVALSHA} on a pooled connection.
     *
     * @return the script's reply
     */
    @Benchmark
    public Object blocking() {
        int user = Workload.next(contended);
        Object reply = java.util.Objects.requireNonNull(jedis)
                .evalsha(
                        SlidingWindowScript.sha1(),
                        Arrays.asList(ScriptArgs.keys(user, windows)),
                        Arrays.asList(ScriptArgs.args(ScriptArgs.member(), windows)));
        if (reply instanceof List<?> list && Long.valueOf(0).equals(list.get(0))) {
            rejected.increment();
        }
        return reply;
    }
}
