package dev.ratelimit.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The demo on a real Redis ({@code REDIS_URL}): limits through Lettuce, and fail-open when Redis stops. */
class DemoRedisTest {

    private static final String HELLO = "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";

    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @RegisterExtension
    final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private DemoServer demo;

    @AfterEach
    void stop() {
        if (demo != null) {
            demo.close();
        }
    }

    private HttpResponse<String> send(String path, String key) throws Exception {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(demo.baseUrl() + path)).timeout(Duration.ofSeconds(30));
        if (key != null) {
            request.header("Authorization", "Bearer " + key).POST(HttpRequest.BodyPublishers.ofString(HELLO));
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @DisplayName("REDIS_URL: limits live in Redis; with Redis stopped the demo fails open, loudly")
    void redisStore() throws Exception {
        demo = DemoServer.start(Map.of("PORT", "0", "REDIS_URL", redis.get().uri()));
        assertThat(demo.statusPage())
                .contains("store:   redis at 127.0.0.1:" + redis.get().port(), "reachable");
        assertThat(send("/health", null).body()).isEqualTo("{\"status\":\"UP\",\"store\":\"redis\"}");

        for (int i = 0; i < 5; i++) {
            assertThat(send("/v1/chat/completions", "demo-free").statusCode()).isEqualTo(200);
        }
        HttpResponse<String> sixth = send("/v1/chat/completions", "demo-free");
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(sixth.headers().firstValue("Retry-After")).isPresent();
        assertThat((Long) redis.get().call("DBSIZE")).as("keys in Redis").isPositive();

        redis.get().stop();
        for (int i = 0; i < 10; i++) {
            HttpResponse<String> degraded = send("/v1/chat/completions", "demo-free");
            assertThat(degraded.statusCode()).isEqualTo(200);
            assertThat(degraded.headers().firstValue("X-RateLimit-Degraded")).contains("true");
        }
        assertThat(send("/metrics", null).body()).contains("ratelimit_fail_open{limiter=\"demo\"} 1.0");
    }
}
