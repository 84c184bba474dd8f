package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The gateway application on its own private redis-server, which the test stops: failing open,
 * requests reach the backend marked degraded; failing closed, the filter refuses them with the
 * unavailable {@code Retry-After}. The breaker stays open for an hour once open.
 */
@DirtiesContext
abstract class GatewayOutageScenarios extends GatewayApplication {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, REDIS);
        registry.add("ratelimit.circuit-breaker.wait-duration-in-open-state", () -> "1h");
    }

    /** Whether the application fails open. */
    protected abstract boolean failOpen();

    @Test
    void whenRedisStopsTheFailurePolicyApplies() {
        Http http = http();
        String key = "free-outage-" + (failOpen() ? "open" : "closed");
        HttpResponse<String> before = http.get("/api/hello", key);
        assertThat(before.statusCode()).isEqualTo(200);
        assertThat(before.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");

        REDIS.get().stop();

        // more than the free tier's 5 a minute, and enough failed calls to open the breaker
        for (int i = 0; i < 7; i++) {
            HttpResponse<String> during = http.get("/api/hello", key);
            if (failOpen()) {
                assertThat(during.statusCode()).isEqualTo(200);
                assertThat(during.headers().firstValue("X-RateLimit-Degraded")).hasValue("minute, day");
                assertThat(during.headers().firstValue("X-RateLimit-Remaining")).isEmpty();
            } else {
                assertThat(during.statusCode()).isEqualTo(429);
                assertThat(during.headers().firstValue("Retry-After")).hasValue("5");
                assertThat(during.headers().firstValue("RateLimit-Policy")).isPresent();
            }
        }
        assertThat(Backend.requests(key)).isEqualTo(failOpen() ? 8 : 1);
    }
}
