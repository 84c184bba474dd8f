package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Paths that are neither metered nor on the {@code passthrough:} list answer OpenAI's 404 and are
 * charged nothing; the servlets' own 405 and the JSON parser's errors are in OpenAI's shape and name
 * no internals. The gateway is in memory before the built-in mock model, spoken to over HTTP.
 */
class UnknownPathTest {

    private Harness harness;

    @BeforeEach
    void start() throws Exception {
        harness = Harness.start(Harness.Store.MEMORY, false);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    @Test
    @DisplayName("a /v1 path off the pass-through list is 404 in OpenAI's shape and touches no window")
    void unknownPathIsNotCharged() throws Exception {
        // more unknown calls than demo-free's 5 requests a minute: none of them may count
        for (int i = 0; i < 7; i++) {
            HttpResponse<String> unknown = harness.get("/v1/assistants", "demo-free");
            assertThat(unknown.statusCode()).isEqualTo(404);
            JsonNode error = OpenAi.JSON.readTree(unknown.body()).path("error");
            assertThat(error.path("code").asText()).isEqualTo("unknown_url");
            assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
            assertThat(error.path("message").asText()).startsWith("Unknown request URL: GET /v1/assistants.");
            assertThat(unknown.headers().firstValue("x-ratelimit-remaining-requests"))
                    .isEmpty();
        }
        // a listed path with another method is not listed either
        assertThat(harness.post("/v1/models", "demo-free", "application/json", "{}")
                        .statusCode())
                .isEqualTo(404);
        assertThat(harness.get("/v1/models/gpt-4o-mini/extra", "demo-free").statusCode())
                .isEqualTo(404);
        assertThat(minuteUsed("demo-user-free")).isZero();
        assertThat(harness.metric("ratelimit_decisions_total")).isZero();
        assertThat(harness.metric("gateway_refusals_total", "endpoint", "other", "status", "404"))
                .isEqualTo(9);

        HttpResponse<String> model = harness.get("/v1/models/gpt-4o-mini", "demo-free");
        assertThat(model.statusCode()).isEqualTo(200);
        assertThat(OpenAi.JSON.readTree(model.body()).path("id").asText()).isEqualTo("gpt-4o-mini");
        assertThat(model.headers().firstValue("x-ratelimit-remaining-requests")).contains("4");
        assertThat(harness.get("/v1/models", "demo-free").headers().firstValue("x-ratelimit-remaining-requests"))
                .as("only the listed calls count")
                .contains("3");
    }

    @Test
    @DisplayName("the passthrough: list is the configuration's; entries are validated")
    void passthroughList() throws Exception {
        String base = Files.readString(Harness.testConfig()).replaceAll("(?s)\npassthrough:.*?\n\n", "\n\n");
        GatewayConfig defaults = GatewayConfig.parse(stream(base), "test");
        assertThat(defaults.passthrough())
                .extracting(GatewayConfig.Route::entry)
                .isEqualTo(GatewayConfig.DEFAULT_PASSTHROUGH);
        GatewayConfig.Route model = defaults.passthrough().get(1);
        assertThat(model.matches("GET", "/v1/models/gpt-4o")).isTrue();
        assertThat(model.matches("GET", "/v1/models/")).isFalse();
        assertThat(model.matches("DELETE", "/v1/models/gpt-4o")).isFalse();

        String bad = base
                + "\npassthrough:\n  - GET /v2/x\n  - get /v1/x\n  - GET /v1/a{id}\n  - GET /v1/responses\n  - GET /v1/batches/{id}\n"
                + "  - GET /v1/messages/batches/{id}\n";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GatewayConfig.parse(stream(bad), "bad"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("passthrough[0]: must be \"METHOD /v1/path\"")
                .hasMessageContaining("passthrough[1]: must be")
                .hasMessageContaining("passthrough[2]: a wildcard is a whole segment")
                .hasMessageContaining("passthrough[3]: /v1/responses is a metered endpoint (POST only)")
                .hasMessageContaining("passthrough[4]: /v1/batches/{id} belongs to a batch API")
                .hasMessageContaining("passthrough[5]: /v1/messages/batches/{id} belongs to a batch API");
    }

    @Test
    @DisplayName("a servlet's own 405 is OpenAI-shaped JSON on both listeners")
    void methodNotAllowed() throws Exception {
        for (String url : List.of(harness.base() + "/health/live", harness.server.managementUrl() + "/status.json")) {
            HttpResponse<String> response = harness.http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(30))
                            .PUT(HttpRequest.BodyPublishers.ofString("x"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(url).isEqualTo(405);
            assertThat(response.headers().firstValue("Content-Type"))
                    .as(url)
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
            assertThat(OpenAi.JSON
                            .readTree(response.body())
                            .path("error")
                            .path("code")
                            .asText())
                    .as(url)
                    .isEqualTo("method_not_allowed");
            assertThat(response.body()).doesNotContain("<html", "jakarta", "Servlet");
        }
    }

    @Test
    @DisplayName("JSON parse errors name the problem, never the parser's internals")
    void jsonErrorsWithoutInternals() throws Exception {
        String deep = "{\"model\":\"gpt-4o-mini\",\"x\":" + "[".repeat(100) + "]".repeat(100) + "}";
        for (String body : List.of(deep, "{\"model\":", "{\"model\":\"a\",\"model\":\"b\"}", "{} {}", "{'model': 1}")) {
            HttpResponse<String> response = harness.chat("demo-free", body);
            assertThat(response.statusCode()).as(body).isEqualTo(400);
            JsonNode error = OpenAi.JSON.readTree(response.body()).path("error");
            assertThat(error.path("code").asText()).as(body).isEqualTo("invalid_json");
            assertThat(error.path("message").asText())
                    .as(body)
                    .startsWith("We could not parse the JSON body of your request: ")
                    .doesNotContain("StreamReadConstraints", "Source:", "REDACTED", "jackson", "Exception", "(code");
        }
        assertThat(OpenAi.JSON
                        .readTree(harness.chat("demo-free", deep).body())
                        .path("error")
                        .path("message")
                        .asText())
                .contains("nested more than 64 levels deep");
        assertThat(minuteUsed("demo-user-free"))
                .as("bad input is never charged")
                .isZero();
    }

    private long minuteUsed(String tenant) throws Exception {
        for (JsonNode entry :
                OpenAi.JSON.readTree(harness.admin("/status.json").body()).path("tenants")) {
            if (entry.path("tenant").asText().equals(tenant)) {
                return entry.path("windows").get(0).path("used").asLong();
            }
        }
        throw new AssertionError("no tenant " + tenant);
    }

    private static ByteArrayInputStream stream(String yaml) {
        return new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8));
    }
}
