package dev.ratelimit.springai;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The advisor over a private {@code redis-server} through the Lettuce store. */
class RedisRateLimitAdvisorTest extends RateLimitAdvisorContract {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private RedisClient client;
    private CloseableWindowStore store;

    @Override
    RateLimiter newLimiter() {
        client = RedisClient.create(redis.get().uri());
        store = LettuceWindowStore.create(client);
        return SlidingWindowRateLimiter.builder(store).build();
    }

    @AfterEach
    void disconnect() {
        store.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
