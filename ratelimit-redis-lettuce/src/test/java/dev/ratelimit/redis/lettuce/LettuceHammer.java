package dev.ratelimit.redis.lettuce;

import dev.ratelimit.redis.testing.Hammer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;

/** The worker process of the multi-process test; see {@link Hammer}. */
public final class LettuceHammer {

    private LettuceHammer() {}

    /**
     * Runs the worker.
     *
     * @param args host, port, user, limit, threads, checks per thread
     * @throws Exception if anything fails
     */
    public static void main(String[] args) throws Exception {
        RedisClient client = RedisClient.create(RedisURI.create(args[0], Integer.parseInt(args[1])));
        try {
            Hammer.run(
                    args,
                    LettuceWindowStore.builder(client)
                            .commandTimeout(java.time.Duration.ofSeconds(5))
                            // four worker JVMs start at once; on a busy 2-core machine connecting can take
                            // longer than the default 3 s, and the fail-closed warm-up would end the worker
                            .connectTimeout(java.time.Duration.ofSeconds(30))
                            .build());
        } finally {
            client.shutdown();
        }
    }
}
