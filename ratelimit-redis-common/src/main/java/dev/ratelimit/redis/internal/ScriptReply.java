package dev.ratelimit.redis.internal;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.Evaluation;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Reads the sliding-window script's reply, a list of integers, into an {@link Evaluation}.
 *
 * <p>A reply of the wrong shape means the script that ran is not ours (or a proxy mangled it); it
 * is reported as {@link RateLimiterUnavailableException} like any other store failure.
 */
public final class ScriptReply {

    private ScriptReply() {}

    /**
     * Parses a reply.
     *
     * @param reply the driver's decoded reply: a list of integer numbers
     * @param windowCount the number of windows (keys) the call carried
     * @return the evaluation
     * @throws RateLimiterUnavailableException if the reply is malformed
     */
    public static Evaluation parse(@Nullable Object reply, int windowCount) {
        if (!(reply instanceof List<?> values) || values.isEmpty()) {
            throw malformed(reply);
        }
        long status = number(values.get(0), reply);
        if (status == 0) {
            if (values.size() != 4) {
                throw malformed(reply);
            }
            long index = number(values.get(1), reply);
            if (index < 0 || index >= windowCount) {
                throw malformed(reply);
            }
            return Evaluation.rejected((int) index, number(values.get(2), reply), number(values.get(3), reply));
        }
        if (status != 1 || values.size() != 1 + 2 * windowCount) {
            throw malformed(reply);
        }
        long[] used = new long[windowCount];
        long[] reset = new long[windowCount];
        for (int i = 0; i < windowCount; i++) {
            used[i] = number(values.get(1 + 2 * i), reply);
            reset[i] = number(values.get(2 + 2 * i), reply);
        }
        return Evaluation.allowed(used, reset);
    }

    private static long number(@Nullable Object value, Object reply) {
        if (value instanceof Long || value instanceof Integer) {
            return ((Number) value).longValue();
        }
        throw malformed(reply);
    }

    private static RateLimiterUnavailableException malformed(@Nullable Object reply) {
        return new RateLimiterUnavailableException("Unexpected reply from the rate-limit script: " + reply);
    }
}
