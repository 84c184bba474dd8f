package dev.ratelimit.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo in this JVM on a free port, driven by a real HTTP client. */
class DemoServerTest {

    private static final String HELLO =
            "{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]}";

    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private DemoServer demo;

    @AfterEach
    void stop() {
        if (demo != null) {
            demo.close();
        }
    }

    private DemoServer start(Map<String, String> environment) throws Exception {
        demo = DemoServer.start(environment);
        return demo;
    }

    private HttpResponse<String> complete(String key, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(demo.baseUrl() + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create(demo.baseUrl() + path))
                        .timeout(Duration.ofSeconds(30))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @DisplayName("a completion is OpenAI-shaped and deterministic, with usage and rate-limit headers")
    void completion() throws Exception {
        start(Map.of("PORT", "0"));

        HttpResponse<String> response = complete("demo-pro", HELLO);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(response.body())
                .startsWith("{\"id\":\"chatcmpl-demo-1\",\"object\":\"chat.completion\",\"created\":")
                .contains("\"model\":\"mock\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                        + "\"content\":\"Mock reply from the ratelimit demo. You said: \\\"Hello there\\\"\"},"
                        + "\"finish_reason\":\"stop\"}],"
                        + "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":10,\"total_tokens\":12}}");
        assertThat(response.headers().firstValue("X-RateLimit-Limit")).contains("60");
        assertThat(response.headers().firstValue("X-RateLimit-Remaining")).contains("59");
    }

    @Test
    @DisplayName("demo-free: the 6th completion within a minute gets 429 with Retry-After")
    void sixthFreeCompletion() throws Exception {
        start(Map.of("PORT", "0"));
        for (int i = 0; i < 5; i++) {
            assertThat(complete("demo-free", HELLO).statusCode()).isEqualTo(200);
        }

        HttpResponse<String> sixth = complete("demo-free", HELLO);

        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(sixth.headers().firstValue("Retry-After").orElseThrow()))
                .isBetween(1L, 60L);
        assertThat(sixth.body()).startsWith("{\"error\":\"rate_limited\",\"window\":\"minute\",\"limit\":5,");
        assertThat(complete("demo-enterprise", HELLO).statusCode()).isEqualTo(200);
    }

    @Test
    @DisplayName("missing or unknown API keys get a JSON 401 and are not counted")
    void unauthorized() throws Exception {
        start(Map.of("PORT", "0"));

        HttpResponse<String> missing = complete(null, HELLO);
        HttpResponse<String> unknown = complete("demo-platinum", HELLO);

        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(missing.body()).contains("\"code\":\"missing_api_key\"");
        assertThat(unknown.statusCode()).isEqualTo(401);
        assertThat(unknown.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(unknown.body()).startsWith("{\"error\":{\"message\":").contains("\"code\":\"invalid_api_key\"");
        assertThat(unknown.headers().firstValue("X-RateLimit-Limit")).isEmpty();
    }

    @Test
    @DisplayName("malformed bodies get an OpenAI-shaped 400; other methods a 405")
    void badRequests() throws Exception {
        start(Map.of("PORT", "0"));
        for (String body : new String[] {
            "",
            "not json",
            "{",
            "[]",
            "{\"messages\":[]}",
            "{\"messages\":\"hi\"}",
            "{\"messages\":[{\"role\":\"user\"}]}",
            "{\"model\":7,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
            "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":true}",
            "{\"a\":1} trailing"
        }) {
            HttpResponse<String> response = complete("demo-enterprise", body);
            assertThat(response.statusCode()).as(body).isEqualTo(400);
            assertThat(response.body())
                    .as(body)
                    .startsWith("{\"error\":{\"message\":")
                    .contains("\"type\":\"invalid_request_error\"");
        }
        HttpResponse<String> get = client.send(
                HttpRequest.newBuilder(URI.create(demo.baseUrl() + "/v1/chat/completions"))
                        .header("Authorization", "Bearer demo-enterprise")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(get.statusCode()).isEqualTo(405);
        assertThat(get.headers().firstValue("Allow")).contains("POST");
    }

    @Test
    @DisplayName("status page, health and metrics are served and exempt from limiting")
    void infoEndpoints() throws Exception {
        start(Map.of("PORT", "0"));
        for (int i = 0; i < 7; i++) {
            assertThat(get("/").statusCode()).isEqualTo(200);
            assertThat(get("/health").statusCode()).isEqualTo(200);
        }
        complete("demo-free", HELLO);

        HttpResponse<String> status = get("/");
        assertThat(status.body()).contains("store:   in-memory", "free", "pro", "enterprise", "curl -i");
        assertThat(status.headers().firstValue("X-RateLimit-Limit")).isEmpty();
        assertThat(get("/health").body()).isEqualTo("{\"status\":\"UP\",\"store\":\"in-memory\"}");
        HttpResponse<String> metrics = get("/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body())
                .contains("ratelimit_decisions_total{limiter=\"demo\",outcome=\"allowed\",tier=\"free\","
                        + "window=\"minute\"} 1.0")
                .contains("ratelimit_fail_open{limiter=\"demo\"} 0.0")
                .contains("ratelimit_check_seconds_count");
        HttpResponse<String> unknown = get("/nope");
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.headers().firstValue("X-RateLimit-Limit"))
                .as("unknown paths are limited by address")
                .contains("5");
    }

    @Test
    @DisplayName("RATELIMIT_TIERS_FILE replaces the tiers; a bad file fails startup naming the entry")
    void tiersFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tiers.properties");
        Files.writeString(file, "tier.free.minute = 2/60s\ntier.pro.minute = 3/1m\n");
        start(Map.of("PORT", "0", "RATELIMIT_TIERS_FILE", file.toString()));

        assertThat(complete("demo-free", HELLO).statusCode()).isEqualTo(200);
        assertThat(complete("demo-free", HELLO).statusCode()).isEqualTo(200);
        HttpResponse<String> third = complete("demo-free", HELLO);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("RateLimit-Policy")).contains("\"minute\";q=2;w=60");
        assertThat(complete("demo-enterprise", HELLO).headers().firstValue("X-RateLimit-Limit"))
                .as("unknown tier names fall back to the default tier")
                .contains("2");

        Path bad = dir.resolve("bad.properties");
        Files.writeString(bad, "tier.free.minute = five/60s\n");
        assertThatThrownBy(() -> DemoServer.start(Map.of("PORT", "0", "RATELIMIT_TIERS_FILE", bad.toString())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tier.free.minute");
    }

    @Test
    @DisplayName("RATE_LIMIT_DISABLED=true: the kill switch lets every request through")
    void killSwitch() throws Exception {
        start(Map.of("PORT", "0", "RATE_LIMIT_DISABLED", "true"));
        for (int i = 0; i < 10; i++) {
            assertThat(complete("demo-free", HELLO).statusCode()).isEqualTo(200);
        }
        assertThat(get("/metrics").body()).contains("ratelimit_disabled{limiter=\"demo\"} 1.0");
        assertThat(get("/").body()).contains("DISABLED");
    }
}
