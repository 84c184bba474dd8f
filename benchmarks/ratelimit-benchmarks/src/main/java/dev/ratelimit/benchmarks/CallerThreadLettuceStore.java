package dev.ratelimit.benchmarks;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import dev.ratelimit.redis.internal.ScriptCall;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An experiment, not a store to use: the blocking check of the Lettuce store with the change
 * proposed to its maintainers, waiting on Lettuce's own future and parsing the reply on the calling
 * thread, so that nothing but Lettuce's decoding runs on the connection's single event-loop thread.
 * Everything else (keys, arguments, script, reply parsing) is the shared code of {@code
 * ratelimit-redis-common}, so the difference to {@code ours-lettuce-8t} is the proposed change alone.
 */
final class CallerThreadLettuceStore implements WindowStore {

    private final RedisAsyncCommands<String, String> commands;
    private final long timeoutMillis;

    CallerThreadLettuceStore(StatefulRedisConnection<String, String> connection, long timeoutMillis) {
        this.commands = connection.async();
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        ScriptCall<Evaluation> call = ScriptCall.reserve(request, KeySpace.of(KeyLayout.STANDALONE));
        String[] keys = call.keys();
        String[] args = call.args();
        List<Object> reply;
        try {
            try {
                reply = commands.<List<Object>>evalsha(SlidingWindowScript.sha1(), ScriptOutputType.MULTI, keys, args)
                        .get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(RedisFailures.unwrap(e) instanceof RedisNoScriptException)) {
                    throw e;
                }
                reply = commands.<List<Object>>eval(SlidingWindowScript.source(), ScriptOutputType.MULTI, keys, args)
                        .get(timeoutMillis, TimeUnit.MILLISECONDS);
            }
        } catch (ExecutionException | TimeoutException e) {
            throw RedisFailures.unavailable("Lettuce", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RateLimiterUnavailableException("Interrupted while waiting for Redis", e);
        }
        return call.read(reply);
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        throw new UnsupportedOperationException("a benchmark experiment for checks: it never peeks");
    }

    @Override
    public void settle(Settlement settlement) {
        throw new UnsupportedOperationException("a benchmark experiment for checks: it never settles reservations");
    }
}
