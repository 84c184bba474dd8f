package dev.ratelimit.benchmarks;

import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import dev.ratelimit.redis.internal.ScriptCall;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An experiment, not a store to use: coalescing. While {@value #MAX_BATCHES_IN_FLIGHT} script calls
 * are in flight on the connection, further checks queue, and the queue leaves as one script call that
 * evaluates its decisions one after the other, in arrival order, each all or nothing (the script runs
 * the stores' script once per decision inside one atomic call). Standalone only (a cluster would need
 * one call per slot); reservations only.
 *
 * <p>The batch script is the stores' script wrapped in a function, generated at start-up, so the
 * per-decision logic is exactly the stores': {@code ARGV = b, (keyCount, argCount, args...)...},
 * {@code KEYS} the decisions' keys one after the other; the reply is one reply per decision.
 */
final class CoalescingLettuceStore implements WindowStore {

    /** Script calls in flight before checks start to queue. */
    static final int MAX_BATCHES_IN_FLIGHT = 4;

    /** The most decisions in one call. */
    static final int MAX_BATCH = 64;

    static final String BATCH_SOURCE = batchSource();
    static final String BATCH_SHA1 = BenchScripts.sha1(BATCH_SOURCE);

    private final RedisAsyncCommands<String, String> commands;
    private final KeySpace keys = KeySpace.of(KeyLayout.STANDALONE);
    private final Object lock = new Object();
    private List<Pending> queue = new ArrayList<>();
    private int inFlight;

    private record Pending(ScriptCall<Evaluation> call, CompletableFuture<Evaluation> result) {}

    CoalescingLettuceStore(StatefulRedisConnection<String, String> connection) {
        this.commands = connection.async();
        connection.sync().scriptLoad(BATCH_SOURCE);
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        return evaluateAsync(request).toCompletableFuture().join();
    }

    @Override
    public CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        Pending pending = new Pending(ScriptCall.reserve(request, keys), new CompletableFuture<>());
        synchronized (lock) { // batches leave in the order they were taken: decisions keep their arrival order
            queue.add(pending);
            if (inFlight < MAX_BATCHES_IN_FLIGHT || queue.size() >= MAX_BATCH) {
                send(take());
            }
        }
        return pending.result();
    }

    private List<Pending> take() {
        List<Pending> batch = queue;
        queue = new ArrayList<>();
        inFlight++;
        return batch;
    }

    private void send(List<Pending> batch) {
        CompletionStage<List<Object>> reply;
        if (batch.size() == 1) {
            ScriptCall<Evaluation> call = batch.get(0).call();
            reply = commands.evalsha(SlidingWindowScript.sha1(), ScriptOutputType.MULTI, call.keys(), call.args());
        } else {
            List<String> batchKeys = new ArrayList<>();
            List<String> batchArgs = new ArrayList<>();
            batchArgs.add("b");
            for (Pending pending : batch) {
                String[] k = pending.call().keys();
                String[] a = pending.call().args();
                batchArgs.add(Integer.toString(k.length));
                batchArgs.add(Integer.toString(a.length));
                batchArgs.addAll(List.of(a));
                batchKeys.addAll(List.of(k));
            }
            reply = commands.evalsha(
                    BATCH_SHA1,
                    ScriptOutputType.MULTI,
                    batchKeys.toArray(String[]::new),
                    batchArgs.toArray(String[]::new));
        }
        reply.whenComplete((result, failure) -> {
            synchronized (lock) {
                inFlight--;
                if (!queue.isEmpty()) {
                    send(take());
                }
            }
            for (int i = 0; i < batch.size(); i++) {
                Pending pending = batch.get(i);
                if (failure != null) {
                    pending.result().completeExceptionally(RedisFailures.unavailable("Lettuce", failure));
                    continue;
                }
                try {
                    pending.result().complete(pending.call().read(batch.size() == 1 ? result : result.get(i)));
                } catch (RuntimeException e) {
                    pending.result().completeExceptionally(e);
                }
            }
        });
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        throw new UnsupportedOperationException("a benchmark experiment for checks: it never peeks");
    }

    @Override
    public void settle(Settlement settlement) {
        throw new UnsupportedOperationException("a benchmark experiment for checks: it never settles reservations");
    }

    private static String batchSource() {
        String source = SlidingWindowScript.source();
        String body = source.substring(source.indexOf('\n') + 1);
        return "#!lua flags=\n"
                + "local function one(ARGV, KEYS)\n"
                + body
                + "\nend\n"
                + "if ARGV[1] ~= 'b' then\n"
                + "  return one(ARGV, KEYS)\n"
                + "end\n"
                + "local results, a, k = {}, 2, 1\n"
                + "while a <= #ARGV do\n"
                + "  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])\n"
                + "  local args, keys = {}, {}\n"
                + "  for j = 1, na do args[j] = ARGV[a + 1 + j] end\n"
                + "  for j = 1, nk do keys[j] = KEYS[k + j - 1] end\n"
                + "  results[#results + 1] = one(args, keys)\n"
                + "  a, k = a + 2 + na, k + nk\n"
                + "end\n"
                + "return results\n";
    }
}
