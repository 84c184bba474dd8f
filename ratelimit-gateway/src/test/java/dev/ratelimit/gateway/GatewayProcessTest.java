package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The gateway as users start it: a separate JVM with PORT=0 and the built-in configuration, driven over HTTP. */
class GatewayProcessTest {

    @Test
    void gatewayProcessServesLimitsAndMetrics() throws Exception {
        try (GatewayProcess gateway = GatewayProcess.onClassPath(Map.of())) {
            String base = gateway.base();
            assertThat(gateway.output())
                    .contains("upstream: built-in mock model")
                    .contains("store:    in-memory")
                    .contains("caps:     gpt-4o-mini 5000 rpm 2000000 tpm")
                    // the built-in configuration caps every other model with "*": no warning
                    .contains("every other model: 500 rpm 200000 tpm shared (\"*\")")
                    .doesNotContain("have an upstream cap")
                    .contains("curl " + base + "/v1/chat/completions -H 'Authorization: Bearer demo-free'");

            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
            HttpResponse<String> last = null;
            for (int i = 1; i <= 6; i++) {
                last = client.send(
                        HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                                .timeout(Duration.ofSeconds(30))
                                .header("Authorization", "Bearer demo-free")
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (i < 6) {
                    assertThat(last.statusCode()).as("completion %d", i).isEqualTo(200);
                    assertThat(last.body()).contains("\"usage\":");
                }
            }
            assertThat(last.statusCode()).isEqualTo(429);
            assertThat(last.headers().firstValue("Retry-After")).isPresent();

            HttpResponse<String> badKey = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                            .header("Authorization", "Bearer not-a-key")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(badKey.statusCode()).isEqualTo(401);
            assertThat(badKey.body()).contains("invalid_api_key");

            HttpResponse<String> metrics = client.send(
                    HttpRequest.newBuilder(URI.create(gateway.managementBase() + "/metrics"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body())
                    .contains("ratelimit_decisions_total{limiter=\"gateway\",outcome=\"allowed\",tier=\"free\","
                            + "window=\"minute\"} 5.0")
                    .contains("ratelimit_decisions_total{limiter=\"gateway\",outcome=\"rejected\",tier=\"free\","
                            + "window=\"minute\"} 1.0")
                    .contains("ratelimit_fail_open{limiter=\"gateway\"} 0.0");
        }
    }
}
