package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ACCESS_LOG=<file>}: one JSON line per request on the API listener, with what the gateway
 * decided and settled, and never a key or a prompt. Driven over HTTP against the built-in mock.
 */
class AccessLogTest {

    private static final String SECRET_PROMPT = "my-secret-prompt-words";
    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"" + SECRET_PROMPT + "\"}]}";
    private static final String STREAM = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":"
            + "\"user\",\"content\":\"" + SECRET_PROMPT + "\"}]}";

    @TempDir
    Path directory;

    @Test
    @DisplayName("one line per request: tenant, endpoint, model, status, decision, window, tokens, ending, upstream")
    void linePerRequest() throws Exception {
        Path log = directory.resolve("access.log");
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false, Map.of("ACCESS_LOG", log.toString()))) {
            assertThat(harness.chat("demo-free", PLAIN).statusCode()).isEqualTo(200);
            assertThat(harness.http
                            .send(harness.chatRequest("demo-free", STREAM), HttpResponse.BodyHandlers.ofString())
                            .statusCode())
                    .isEqualTo(200);
            assertThat(harness.chat("not-a-key", PLAIN).statusCode()).isEqualTo(401);
            for (int i = 0; i < 3; i++) {
                harness.chat("demo-free", PLAIN);
            }
            assertThat(harness.chat("demo-free", PLAIN).statusCode()).isEqualTo(429);
            assertThat(harness.get("/v1/models", "demo-pro").statusCode()).isEqualTo(200);
            assertThat(harness.get("/v1/unknown", "demo-pro").statusCode()).isEqualTo(404);

            List<JsonNode> lines = new ArrayList<>();
            Harness.await("nine lines", () -> read(log).size() == 9);
            lines.addAll(read(log));
            String text = Files.readString(log);
            assertThat(text)
                    .doesNotContain(SECRET_PROMPT, "demo-free", "demo-pro", "not-a-key", "Bearer")
                    .doesNotContain("Hello"); // no answer text either

            JsonNode plain = lines.get(0);
            assertThat(plain.path("tenant").asText()).isEqualTo("demo-user-free");
            assertThat(plain.path("method").asText()).isEqualTo("POST");
            assertThat(plain.path("endpoint").asText()).isEqualTo("/v1/chat/completions");
            assertThat(plain.path("model").asText()).isEqualTo("gpt-4o-mini");
            assertThat(plain.path("status").asInt()).isEqualTo(200);
            assertThat(plain.path("decision").asText()).isEqualTo("allowed");
            assertThat(plain.path("window").isTextual()).isTrue();
            assertThat(plain.path("estimatedTokens").asLong()).isPositive();
            assertThat(plain.path("settledTokens").asLong())
                    .isPositive()
                    .isLessThanOrEqualTo(plain.path("estimatedTokens").asLong());
            assertThat(plain.path("ending").asText()).isEqualTo("completed");
            assertThat(plain.path("upstreamStatus").asInt()).isEqualTo(200);
            assertThat(plain.path("latencyMs").isIntegralNumber()).isTrue();
            assertThat(plain.path("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");

            assertThat(lines.get(1).path("ending").asText()).isEqualTo("stream_completed");
            JsonNode unauthorized = lines.get(2);
            assertThat(unauthorized.path("status").asInt()).isEqualTo(401);
            assertThat(unauthorized.path("tenant").isNull()).isTrue();
            assertThat(unauthorized.path("decision").isNull()).isTrue();

            JsonNode refused = lines.get(6);
            assertThat(refused.path("status").asInt()).isEqualTo(429);
            assertThat(refused.path("decision").asText()).isEqualTo("rejected");
            assertThat(refused.path("window").asText()).isEqualTo("minute");
            assertThat(refused.path("settledTokens").isNull()).isTrue();
            assertThat(refused.path("ending").isNull()).isTrue();
            assertThat(refused.path("upstreamStatus").isNull()).isTrue();

            JsonNode models = lines.get(7);
            assertThat(models.path("endpoint").asText()).isEqualTo("/v1/models");
            assertThat(models.path("tenant").asText()).isEqualTo("demo-user-pro");
            assertThat(models.path("decision").asText()).isEqualTo("allowed");
            assertThat(models.path("upstreamStatus").isNull())
                    .as("pass-through relays are not metered")
                    .isTrue();
            assertThat(lines.get(8).path("status").asInt()).isEqualTo(404);
            assertThat(lines.get(8).path("decision").isNull())
                    .as("an unknown path is never charged")
                    .isTrue();
        }
    }

    private static List<JsonNode> read(Path log) {
        try {
            List<JsonNode> lines = new ArrayList<>();
            for (String line : Files.readAllLines(log)) {
                lines.add(OpenAi.JSON.readTree(line));
            }
            return lines;
        } catch (Exception e) {
            return List.of();
        }
    }
}
