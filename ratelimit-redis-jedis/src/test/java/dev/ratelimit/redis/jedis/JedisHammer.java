package dev.ratelimit.redis.jedis;

import dev.ratelimit.redis.testing.Hammer;
import java.time.Duration;
import redis.clients.jedis.RedisClient;

/** The worker process of the multi-process test; see {@link Hammer}. */
public final class JedisHammer {

    private JedisHammer() {}

    /**
     * Runs the worker.
     *
     * @param args host, port, user, limit, threads, checks per thread
     * @throws Exception if anything fails
     */
    public static void main(String[] args) throws Exception {
        try (RedisClient jedis = JedisClients.standalone(
                args[0], Integer.parseInt(args[1]), Duration.ofSeconds(5), 8, Duration.ofSeconds(10))) {
            Hammer.run(args, JedisWindowStore.create(jedis));
        }
    }
}
