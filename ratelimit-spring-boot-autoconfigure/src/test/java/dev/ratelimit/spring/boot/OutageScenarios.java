package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * An application on its own private redis-server, which the test stops: failing open, requests pass
 * marked degraded and health stays UP (degraded); failing closed, they get 503 and health is DOWN.
 * The breaker stays open for an hour once open, so its state is certain when health is read.
 */
@DirtiesContext
public abstract class OutageScenarios {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", () -> REDIS.get().host());
        registry.add("spring.data.redis.port", () -> REDIS.get().port());
        registry.add("ratelimit.circuit-breaker.wait-duration-in-open-state", () -> "1h");
    }

    @LocalServerPort
    int port;

    /** Whether the application fails open. */
    protected abstract boolean failOpen();

    @Test
    public void whenRedisStopsTheFailurePolicyAppliesAndHealthSaysSo() {
        Http http = new Http(port);
        String token = TestJwts.token("outage-user", null);
        HttpResponse<String> before = http.get("/api/hello", token);
        assertThat(before.statusCode()).isEqualTo(200);
        assertThat(before.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");
        assertThat(http.get("/actuator/health/rateLimit").body()).contains("\"store\":\"reachable\"");

        REDIS.get().stop();

        // six failed calls: the breaker (at least 5 calls, half failed) opens and stays open
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> during = http.get("/api/hello", token);
            if (failOpen()) {
                assertThat(during.statusCode()).isEqualTo(200);
                assertThat(during.headers().firstValue("X-RateLimit-Degraded")).hasValue("minute, day");
                assertThat(during.headers().firstValue("X-RateLimit-Remaining")).isEmpty();
            } else {
                assertThat(during.statusCode()).isEqualTo(503);
                assertThat(during.headers().firstValue("Retry-After")).hasValue("5");
                assertThat(during.body()).startsWith("{\"error\":\"rate_limiter_unavailable\"");
            }
        }
        HttpResponse<String> health = http.get("/actuator/health/rateLimit");
        assertThat(health.body())
                .contains("\"store\":\"unreachable\"")
                .contains("\"circuitBreaker\":\"open\"")
                .contains("\"failOpen\":" + failOpen());
        if (failOpen()) {
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"").contains("\"degraded\":true");
        } else {
            assertThat(health.statusCode()).isEqualTo(503);
            assertThat(health.body()).contains("\"status\":\"DOWN\"");
            assertThat(http.get("/actuator/health").statusCode()).isEqualTo(503);
        }
    }
}
