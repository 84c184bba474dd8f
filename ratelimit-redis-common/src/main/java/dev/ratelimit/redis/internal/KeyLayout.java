package dev.ratelimit.redis.internal;

/**
 * How keys are spelled: for a single Redis server, or for Redis Cluster where all windows of one
 * scope must share a hash slot; see {@link KeySpace}.
 */
public enum KeyLayout {
    /** {@code <prefix>:<scope>:<window>}. */
    STANDALONE,
    /** {@code <prefix>:{<scope>}:<window>}: the scope part is the hash tag. */
    CLUSTER
}
