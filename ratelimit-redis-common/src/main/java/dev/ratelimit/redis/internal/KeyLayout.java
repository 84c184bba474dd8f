package dev.ratelimit.redis.internal;

/**
 * How window keys are spelled: for a single Redis server, or for Redis Cluster where all windows of
 * one user must share a hash slot.
 */
public enum KeyLayout {
    /** {@code ratelimit:<user>:<window seconds>}. */
    STANDALONE,
    /** {@code ratelimit:{<user>}:<window seconds>}: the user part is the hash tag. */
    CLUSTER;

    /**
     * Returns the key of one window of one subject.
     *
     * @param subject the user id
     * @param windowSeconds the window length in seconds
     * @return the key
     */
    public String key(String subject, long windowSeconds) {
        return RedisKeys.key(this, subject, windowSeconds);
    }
}
