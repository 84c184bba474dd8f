package dev.ratelimit.redis.jedis;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import dev.ratelimit.redis.internal.ScriptCall;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.Pool;

/** The Jedis store: one {@code EVALSHA} per check, {@code EVAL} only after {@code NOSCRIPT}. */
final class JedisStore implements WindowStore {

    private static final String NAME = "Jedis";

    /**
     * Gives broken connections back to their pool off the calling thread: commons-pool2 replaces an
     * invalidated connection at once, in the thread that invalidates it, and against a stalled Redis
     * that replacement's handshake waits a whole timeout more. No threads while nothing fails; when
     * all are busy, the caller does it, as Jedis itself would.
     */
    private static final Executor RELEASER = new ThreadPoolExecutor(
            0,
            16,
            5,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            task -> {
                Thread thread = new Thread(task, "ratelimit-jedis-release");
                thread.setDaemon(true);
                return thread;
            },
            new ThreadPoolExecutor.CallerRunsPolicy());

    private final UnifiedJedis jedis;
    private final @Nullable Pool<Connection> pool;
    private final KeySpace keys;

    JedisStore(UnifiedJedis jedis, @Nullable Pool<Connection> pool, KeySpace keys) {
        this.jedis = jedis;
        this.pool = pool;
        this.keys = keys;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return run(ScriptCall.reserve(request, keys));
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return run(ScriptCall.peek(request, keys));
    }

    @Override
    public void settle(Settlement settlement) {
        Objects.requireNonNull(settlement, "settlement must not be null");
        for (ScriptCall<Boolean> call : ScriptCall.settle(settlement, keys)) {
            run(call);
        }
    }

    @Override
    public boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        Objects.requireNonNull(lease, "lease must not be null");
        return run(ScriptCall.renewLease(lease, entryId, nowMillis, keys));
    }

    @Override
    public long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        Objects.requireNonNull(lease, "lease must not be null");
        return run(ScriptCall.leasesHeld(lease, nowMillis, keys));
    }

    @Override
    public Evaluation takeLease(BudgetLease lease, long nowMillis) {
        return run(ScriptCall.takeLease(lease, nowMillis, keys));
    }

    @Override
    public Evaluation exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis) {
        return run(ScriptCall.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis, keys));
    }

    @Override
    public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        run(ScriptCall.returnLease(lease, stampMillis, requestsUsed, used, nowMillis, keys));
    }

    @Override
    public boolean atomicAcrossScopes() {
        return keys.layout() != KeyLayout.CLUSTER;
    }

    private <T> T run(ScriptCall<T> call) {
        Object reply;
        try {
            reply = evaluate(Arrays.asList(call.keys()), Arrays.asList(call.args()));
        } catch (RuntimeException e) {
            throw RedisFailures.unavailable(NAME, e);
        }
        return call.read(reply);
    }

    private Object evaluate(List<String> keys, List<String> args) {
        if (pool != null) {
            return evaluatePooled(pool, keys, args);
        }
        try {
            return jedis.evalsha(SlidingWindowScript.sha1(), keys, args);
        } catch (JedisDataException e) {
            if (isNoScript(e)) {
                // the script cache was flushed or this node never saw the script: EVAL sends and caches it
                return jedis.eval(SlidingWindowScript.source(), keys, args);
            }
            throw e;
        }
    }

    /**
     * What {@code UnifiedJedis} does for a pooled client, except that a broken connection goes back
     * to the pool off this thread, so a failure costs the caller one timeout, not two.
     */
    private static Object evaluatePooled(Pool<Connection> pool, List<String> keys, List<String> args) {
        Connection connection = pool.getResource();
        Object reply;
        try {
            try {
                reply = connection.executeCommand(
                        script(Protocol.Command.EVALSHA, SlidingWindowScript.sha1(), keys, args));
            } catch (JedisDataException e) {
                if (!isNoScript(e)) {
                    throw e;
                }
                reply = connection.executeCommand(
                        script(Protocol.Command.EVAL, SlidingWindowScript.source(), keys, args));
            }
        } catch (JedisConnectionException e) {
            connection.setBroken();
            RELEASER.execute(connection::close);
            throw e;
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
        connection.close();
        return reply;
    }

    private static CommandArguments script(
            Protocol.Command command, String script, List<String> keys, List<String> args) {
        CommandArguments arguments = new CommandArguments(command).add(script).add(keys.size());
        for (String key : keys) {
            arguments.key(key);
        }
        for (String arg : args) {
            arguments.add(arg);
        }
        return arguments;
    }

    private static boolean isNoScript(JedisDataException e) {
        return e instanceof JedisNoScriptException || SlidingWindowScript.isNoScript(e.getMessage());
    }

    @Override
    public String toString() {
        return "JedisWindowStore{" + keys.layout().name().toLowerCase(Locale.ROOT) + ", prefix=" + keys.prefix() + "}";
    }
}
