package dev.ratelimit.redis.lettuce;

import dev.ratelimit.core.CloseableWindowStore;
import io.lettuce.core.RedisClient;
import java.time.Duration;

/** The store every standalone conformance test of this module runs the kit against. */
final class LettuceConformance {

    private LettuceConformance() {}

    /**
     * Builds a store on {@code client} whose timeouts judge correctness, not speed: a busy machine must not
     * turn a slow reply into a failure.
     */
    static CloseableWindowStore store(RedisClient client) {
        return LettuceWindowStore.builder(client)
                .commandTimeout(Duration.ofSeconds(2))
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }
}
