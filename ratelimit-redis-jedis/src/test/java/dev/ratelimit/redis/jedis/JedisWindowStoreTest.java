package dev.ratelimit.redis.jedis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

class JedisWindowStoreTest {

    @Test
    void argumentsAreValidated() {
        assertThatThrownBy(() -> JedisWindowStore.create(null)).hasMessageContaining("jedis");
    }

    @Test
    void anExhaustedPoolFailsAsUnavailableInsteadOfBlocking() throws Exception {
        try (RedisServer redis = RedisServer.start();
                RedisClient jedis = JedisClients.standalone(
                        redis.host(), redis.port(), Duration.ofSeconds(2), 1, Duration.ofMillis(100))) {
            WindowStore store = JedisWindowStore.create(jedis);
            StoreRequest request =
                    new StoreRequest("pool", List.of(Window.of(5, Duration.ofMinutes(1))), 1, StoreRequest.STORE_TIME);
            assertThat(store.evaluate(request).isAllowed()).isTrue();
            // hold the only connection with a blocking command on another thread
            Thread holder = new Thread(() -> {
                try {
                    jedis.blpop(1.5, "pool-holder");
                } catch (RuntimeException e) {
                    // the test only needs the connection held for a while
                }
            });
            holder.start();
            Thread.sleep(200);
            assertThatThrownBy(() -> store.evaluate(request)).isInstanceOf(RateLimiterUnavailableException.class);
            holder.join();
            assertThat(store.evaluate(request).isAllowed()).isTrue();
        }
    }

    @Test
    void keyPrefixAndExplicitClusterLayoutNameTheKeys() throws Exception {
        try (RedisServer redis = RedisServer.start();
                RedisClient jedis = JedisClients.standalone(
                        redis.host(), redis.port(), Duration.ofSeconds(2), 4, Duration.ofMillis(500))) {
            StoreRequest request = new StoreRequest(
                    "tenant", List.of(Window.of(1, Duration.ofMinutes(1))), 1, StoreRequest.STORE_TIME);
            WindowStore prefixed =
                    JedisWindowStore.builder(jedis).keyPrefix("svc-a").build();
            WindowStore clusterLayout =
                    JedisWindowStore.builder(jedis).cluster(true).build();
            assertThat(prefixed.evaluate(request).isAllowed()).isTrue();
            assertThat(prefixed.evaluate(request).isAllowed()).isFalse();
            assertThat(clusterLayout.evaluate(request).isAllowed())
                    .as("other keys, other budget")
                    .isTrue();
            assertThat(jedis.exists("svc-a:tenant:60")).isTrue();
            assertThat(jedis.exists("ratelimit:{tenant}:60")).isTrue();
        }
        assertThatThrownBy(() -> JedisWindowStore.builder(null)).hasMessageContaining("jedis");
    }
}
