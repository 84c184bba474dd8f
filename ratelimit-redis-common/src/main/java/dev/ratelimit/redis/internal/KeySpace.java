package dev.ratelimit.redis.internal;

import java.util.Objects;

/**
 * Where a store's keys live: the layout (standalone or cluster) and the prefix before the user part,
 * {@code <prefix>:<user>:<window seconds>}; {@value RedisKeys#DEFAULT_PREFIX} by default.
 *
 * @param layout standalone or cluster
 * @param prefix the key prefix: not empty, no braces (they would move a cluster hash tag)
 */
public record KeySpace(KeyLayout layout, String prefix) {

    /**
     * Validates the prefix.
     *
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if the prefix is empty or holds a brace
     */
    public KeySpace {
        Objects.requireNonNull(layout, "layout must not be null");
        RedisKeys.checkPrefix(prefix, "prefix");
    }

    /**
     * Returns the key space of a layout with the default prefix.
     *
     * @param layout standalone or cluster
     * @return the key space
     */
    public static KeySpace of(KeyLayout layout) {
        return new KeySpace(layout, RedisKeys.DEFAULT_PREFIX);
    }

    /**
     * Returns the key of one window of one subject.
     *
     * @param subject the user id
     * @param windowSeconds the window length in seconds
     * @return the key
     */
    public String key(String subject, long windowSeconds) {
        return RedisKeys.key(layout, prefix, subject, windowSeconds);
    }
}
