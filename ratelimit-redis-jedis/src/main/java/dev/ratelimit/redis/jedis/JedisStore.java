package dev.ratelimit.redis.jedis;

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
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/** The Jedis store: one {@code EVALSHA} per check, {@code EVAL} only after {@code NOSCRIPT}. */
final class JedisStore implements WindowStore {

    private static final String NAME = "Jedis";

    private final UnifiedJedis jedis;
    private final KeySpace keys;

    JedisStore(UnifiedJedis jedis, KeySpace keys) {
        this.jedis = jedis;
        this.keys = keys;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return run(ScriptCall.reserve(request, keys));
    }

    @Override
    public void settle(Settlement settlement) {
        Objects.requireNonNull(settlement, "settlement must not be null");
        for (ScriptCall<Boolean> call : ScriptCall.settle(settlement, keys)) {
            run(call);
        }
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
        try {
            return jedis.evalsha(SlidingWindowScript.sha1(), keys, args);
        } catch (JedisNoScriptException e) {
            return jedis.eval(SlidingWindowScript.source(), keys, args);
        } catch (JedisDataException e) {
            if (SlidingWindowScript.isNoScript(e.getMessage())) {
                // the script cache was flushed or this node never saw the script: EVAL sends and caches it
                return jedis.eval(SlidingWindowScript.source(), keys, args);
            }
            throw e;
        }
    }

    @Override
    public String toString() {
        return "JedisWindowStore{" + keys.layout().name().toLowerCase(Locale.ROOT) + ", prefix=" + keys.prefix() + "}";
    }
}
