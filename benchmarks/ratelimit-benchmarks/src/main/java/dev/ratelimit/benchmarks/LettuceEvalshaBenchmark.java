package dev.ratelimit.benchmarks;

import dev.ratelimit.redis.internal.SlidingWindowScript;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The driver ceiling for Lettuce: a plain {@code EVALSHA} of our script with the same keys and
 * arguments our store sends, and nothing else (no validation, no decision, no circuit breaker). With
 * {@code variant=seed}, the seed's own script ({@link BenchScripts#SEED}, the project's first
 * sliding-window script) called as naively on one window: server time, one permit, a fresh member, the
 * same key and limit; the single-check targets compare ours against it ({@code --seed}).
 */
@State(Scope.Benchmark)
public class LettuceEvalshaBenchmark extends AsyncWorkloadState {

    /** {@code check}: our script; {@code seed}: the seed's script, on one window. */
    @Param({"check", "seed"})
    public String variant = "check";

    private static final String SERVER_TIME = "";
    private static final String ONE_PERMIT = "1";
    private static final String MINUTE_MILLIS = Long.toString(Workload.MINUTE.lengthMillis());
    private static final String MINUTE_LIMIT = Long.toString(Workload.MINUTE.limit());

    private boolean seed;
    private String sha = SlidingWindowScript.sha1();

    private @org.jspecify.annotations.Nullable RedisClient client;
    private @org.jspecify.annotations.Nullable StatefulRedisConnection<String, String> connection;
    private @org.jspecify.annotations.Nullable RedisCommands<String, String> sync;
    private @org.jspecify.annotations.Nullable RedisAsyncCommands<String, String> async;

    /** Empties Redis, loads the script and opens one connection, as the store does. */
    @Setup(Level.Trial)
    public void setUp() {
        prepareRedisWorkload();
        RedisClient created = BenchRedis.lettuce();
        client = created;
        StatefulRedisConnection<String, String> opened = created.connect();
        connection = opened;
        sync = opened.sync();
        async = opened.async();
        seed = "seed".equals(variant);
        if (seed) {
            if (windows != 1) {
                throw new IllegalStateException("the seed's script is measured on one window");
            }
            sha = sync.scriptLoad(BenchScripts.SEED.source());
        }
    }

    private String[] args() {
        return seed
                ? new String[] {SERVER_TIME, ONE_PERMIT, ScriptArgs.member(), MINUTE_MILLIS, MINUTE_LIMIT}
                : ScriptArgs.args(ScriptArgs.member(), windows);
    }

    /** Closes the connection and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("LettuceEvalsha", inFlight.failed());
        if (connection != null) {
            connection.close();
        }
        if (client != null) {
            client.shutdown();
        }
    }

    /**
     * Runs one {@code EVALSHA} and waits for its reply.
     *
     * @return the script's reply
     */
    @Benchmark
    public List<Object> blocking() {
        int user = Workload.next(contended);
        List<Object> reply = java.util.Objects.requireNonNull(sync)
                .evalsha(sha, ScriptOutputType.MULTI, ScriptArgs.keys(user, windows), args());
        count(reply);
        return reply;
    }

    /**
     * Starts one {@code EVALSHA} once fewer than 64 are in flight.
     *
     * @throws InterruptedException if interrupted while waiting for room
     */
    @Benchmark
    public void async64() throws InterruptedException {
        inFlight.acquire();
        int user = Workload.next(contended);
        RedisFuture<List<Object>> reply = java.util.Objects.requireNonNull(async)
                .evalsha(sha, ScriptOutputType.MULTI, ScriptArgs.keys(user, windows), args());
        reply.whenComplete((value, failure) -> {
            if (value != null) {
                count(value);
            }
            inFlight.release(failure);
        });
    }

    private void count(List<Object> reply) {
        if (Long.valueOf(0).equals(reply.get(0))) {
            rejected.increment();
        }
    }
}
