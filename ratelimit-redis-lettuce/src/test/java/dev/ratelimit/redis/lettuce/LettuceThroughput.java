package dev.ratelimit.redis.lettuce;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.ScriptCall;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.function.IntFunction;

/**
 * A rough side-by-side figure, not a benchmark (JMH lives elsewhere): checks per second of the
 * Lettuce store, blocking on one thread and asynchronous with 64 in flight, against a plain {@code
 * EVALSHA} of the same script with the same arguments from the same driver, on a private
 * redis-server. Run with {@code java -cp <test classpath> dev.ratelimit.redis.lettuce.LettuceThroughput
 * [seconds]}.
 */
public final class LettuceThroughput {

    private static final int USERS = 1_000;
    private static final int IN_FLIGHT = 64;
    private static final List<Window> WINDOWS = List.of(
            new Window("minute", 1_000_000, Duration.ofMinutes(1)), new Window("day", 10_000_000, Duration.ofDays(1)));

    private LettuceThroughput() {}

    /**
     * Runs the measurement and prints one line per variant.
     *
     * @param args optionally the seconds each variant runs (default 5)
     * @throws Exception if anything fails
     */
    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 5;
        try (RedisServer redis = RedisServer.start()) {
            RedisClient client = RedisClient.create(redis.uri());
            WindowStore store = LettuceWindowStore.builder(client)
                    .commandTimeout(Duration.ofSeconds(5))
                    .build();
            StatefulRedisConnection<String, String> plain = client.connect();
            RedisCommands<String, String> sync = plain.sync();
            RedisAsyncCommands<String, String> async = plain.async();
            sync.scriptLoad(SlidingWindowScript.source());
            IntFunction<StoreRequest> request =
                    i -> new StoreRequest("bench-" + (i % USERS), WINDOWS, 1, StoreRequest.STORE_TIME);

            System.out.printf(
                    Locale.ROOT,
                    "redis-server %s, %d s per variant, %d windows, %d users%n",
                    redis.call("INFO", "server")
                            .toString()
                            .lines()
                            .filter(l -> l.startsWith("redis_version"))
                            .findFirst()
                            .orElse("?"),
                    seconds,
                    WINDOWS.size(),
                    USERS);
            for (int round = 0; round < 2; round++) {
                boolean warmUp = round == 0;
                long runFor = warmUp ? Math.max(1, seconds / 2) : seconds;
                report(warmUp, "store, blocking, 1 thread", blocking(runFor, i -> store.evaluate(request.apply(i))));
                report(warmUp, "plain EVALSHA, blocking, 1 thread", blocking(runFor, i -> {
                    ScriptCall<?> call = ScriptCall.reserve(request.apply(i), KeySpace.of(KeyLayout.STANDALONE));
                    sync.evalsha(SlidingWindowScript.sha1(), ScriptOutputType.MULTI, call.keys(), call.args());
                }));
                report(
                        warmUp,
                        "store, async, 64 in flight",
                        pipelined(runFor, i -> store.evaluateAsync(request.apply(i))));
                report(warmUp, "plain EVALSHA, async, 64 in flight", pipelined(runFor, i -> {
                    ScriptCall<?> call = ScriptCall.reserve(request.apply(i), KeySpace.of(KeyLayout.STANDALONE));
                    return async.evalsha(SlidingWindowScript.sha1(), ScriptOutputType.MULTI, call.keys(), call.args());
                }));
            }
            plain.close();
            ((AutoCloseable) store).close();
            client.shutdown();
        }
    }

    private interface Check {
        void run(int i) throws Exception;
    }

    private interface AsyncCheck {
        CompletionStage<?> run(int i);
    }

    private static double blocking(long seconds, Check check) throws Exception {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long start = System.nanoTime();
        int done = 0;
        while (System.nanoTime() < end) {
            check.run(done++);
        }
        return done / ((System.nanoTime() - start) / 1e9);
    }

    private static double pipelined(long seconds, AsyncCheck check) throws InterruptedException {
        Semaphore slots = new Semaphore(IN_FLIGHT);
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long start = System.nanoTime();
        int issued = 0;
        while (System.nanoTime() < end) {
            slots.acquire();
            check.run(issued++).whenComplete((result, failure) -> {
                if (failure != null) {
                    failure.printStackTrace();
                }
                slots.release();
            });
        }
        slots.acquire(IN_FLIGHT);
        return issued / ((System.nanoTime() - start) / 1e9);
    }

    private static void report(boolean warmUp, String variant, double perSecond) {
        if (!warmUp) {
            System.out.printf(Locale.ROOT, "%-40s %,10.0f checks/s%n", variant, perSecond);
        }
    }
}
