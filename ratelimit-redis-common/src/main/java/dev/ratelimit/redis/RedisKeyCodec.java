package dev.ratelimit.redis;

import dev.ratelimit.redis.internal.RedisKeys;

/**
 * The codec the Redis stores write names into their keys with, for keys an application keeps on the
 * same Redis beside the limiter's (the gateway's cooldowns, alerts, batches and managed keys are
 * such): a name becomes a token that is safe inside a Redis Cluster hash tag and never collides with
 * another name's.
 *
 * <p>A name is written as itself, unless it holds <code>'&#125;'</code> (which would end a hash tag
 * early), starts with {@code '~'}, or holds an unpaired surrogate (which UTF-8 cannot carry): those
 * are written {@code ~} followed by the unpadded base64url of their UTF-16 code units. Distinct
 * names always give distinct tokens; names may hold spaces, colons, <code>'&#123;'</code> and any
 * Unicode.
 */
public final class RedisKeyCodec {

    private RedisKeyCodec() {}

    /**
     * Returns the token that stands for a name in a key.
     *
     * @param name the name, not empty
     * @return the token: never empty, never holds <code>'&#125;'</code>
     * @throws NullPointerException if {@code name} is {@code null}
     * @throws IllegalArgumentException if {@code name} is empty
     */
    public static String token(String name) {
        return RedisKeys.token(name);
    }

    /**
     * Returns {@code name}'s token as a Redis Cluster hash tag, <code>&#123;token&#125;</code>: every
     * key holding it lies in one slot.
     *
     * @param name the name, not empty
     * @return the hash tag
     * @throws NullPointerException if {@code name} is {@code null}
     * @throws IllegalArgumentException if {@code name} is empty
     */
    public static String hashTag(String name) {
        return "{" + RedisKeys.token(name) + "}";
    }

    /**
     * Validates a key prefix: not empty and without braces, which would move a hash tag.
     *
     * @param prefix the prefix
     * @param argument the argument's name, for the message
     * @return the prefix
     * @throws NullPointerException if {@code prefix} is {@code null}
     * @throws IllegalArgumentException if {@code prefix} is empty or holds a brace
     */
    public static String checkPrefix(String prefix, String argument) {
        return RedisKeys.checkPrefix(prefix, argument);
    }
}
