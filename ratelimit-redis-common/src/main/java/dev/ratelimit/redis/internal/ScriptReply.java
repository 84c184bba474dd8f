package dev.ratelimit.redis.internal;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.Evaluation;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Reads the sliding-window script's replies, lists of integers.
 *
 * <p>A reply of the wrong shape means the script that ran is not ours (or a proxy mangled it); it
 * is reported as {@link RateLimiterUnavailableException} like any other store failure.
 */
final class ScriptReply {

    private static final int ALLOWED = 1;
    private static final int REJECTED = 0;
    private static final int TOO_LARGE = 2;
    private static final int LEASE_REFUSED = 3;

    private ScriptReply() {}

    /** Reads a reserve reply: {status, now, index, retry, used_1, reset_1, ...}. */
    static Evaluation evaluation(@Nullable Object reply, int windowCount) {
        if (!(reply instanceof List<?> values) || values.size() != 4 + 2 * windowCount) {
            throw malformed(reply);
        }
        long status = number(values.get(0), reply);
        long now = number(values.get(1), reply);
        long index = number(values.get(2), reply);
        long retry = number(values.get(3), reply);
        long[] used = new long[windowCount];
        long[] reset = new long[windowCount];
        for (int i = 0; i < windowCount; i++) {
            used[i] = number(values.get(4 + 2 * i), reply);
            reset[i] = number(values.get(5 + 2 * i), reply);
        }
        try {
            if (status == ALLOWED) {
                return Evaluation.allowed(now, used, reset);
            }
            if (status == REJECTED && index >= 0 && index < windowCount) {
                return Evaluation.rejected(now, (int) index, retry, used, reset);
            }
            if (status == TOO_LARGE && index >= 0 && index < windowCount) {
                return Evaluation.tooLarge(now, (int) index, used, reset);
            }
            if (status == LEASE_REFUSED && index == -1) {
                return Evaluation.leaseRefused(now, used, reset);
            }
        } catch (IllegalArgumentException e) {
            throw malformed(reply);
        }
        throw malformed(reply);
    }

    /** Reads a settle reply: {1}. */
    static Boolean settled(@Nullable Object reply) {
        if (reply instanceof List<?> values
                && values.size() == 1
                && Long.valueOf(1).equals(values.get(0))) {
            return Boolean.TRUE;
        }
        throw malformed(reply);
    }

    static Long count(@Nullable Object reply) {
        if (reply instanceof List<?> values && values.size() == 1) {
            return number(values.get(0), reply);
        }
        throw malformed(reply);
    }

    private static long number(@Nullable Object value, @Nullable Object reply) {
        if (value instanceof Long || value instanceof Integer) {
            return ((Number) value).longValue();
        }
        throw malformed(reply);
    }

    private static RateLimiterUnavailableException malformed(@Nullable Object reply) {
        return new RateLimiterUnavailableException("Unexpected reply from the rate-limit script: " + reply);
    }
}
