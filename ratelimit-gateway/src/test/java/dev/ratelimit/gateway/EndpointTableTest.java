package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Nothing slips through: every endpoint openai-java exposes ({@code openai-sdk-endpoints.txt}, one
 * row per method and path with what the gateway does with it) is sent over HTTP to a gateway with
 * the default pass-through list in front of its mock model. A metered row answers with token
 * headers, a relayed row with request headers only, and every other row is OpenAI's 404 with no
 * rate-limit header; the tenant's request window then holds exactly the metered and relayed rows.
 */
@ParameterizedClass
@EnumSource(Harness.Store.class)
class EndpointTableTest {

    private static final String TENANT = "demo-user-enterprise";

    /** A valid body for each metered endpoint; every other POST sends {@code {}}. */
    private static final Map<String, String> BODIES = Map.of(
            "/v1/chat/completions", "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
            "/v1/completions", "{\"model\":\"gpt-4o-mini\",\"prompt\":\"Hi\",\"max_tokens\":20}",
            "/v1/embeddings", "{\"model\":\"text-embedding-3-small\",\"input\":\"Hi\"}",
            "/v1/responses", "{\"model\":\"gpt-4o-mini\",\"input\":\"Hi\",\"max_output_tokens\":20}");

    /** Paths no SDK sends but a client might: near misses of the metered paths are not metered by accident. */
    private static final List<String> NEAR_MISSES = List.of(
            "POST /v1/chat/completions/ 404",
            "POST /v1/responses/ 404",
            "PUT /v1/responses 404",
            "PATCH /v1/completions 404",
            "GET /v1/embeddings 404",
            "DELETE /v1/models 404",
            "POST /v1/chat 404",
            "POST /v1 404");

    @Parameter
    Harness.Store store;

    @TempDir
    Path dir;

    private Harness harness;

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    @Test
    @DisplayName("every openai-java endpoint is metered, relayed (GET /v1/models, /v1/models/{id}) or 404 uncharged")
    void everyEndpoint() throws Exception {
        Path config = dir.resolve("gateway.yaml");
        // the test configuration without its passthrough: list, so the defaults apply
        Files.writeString(
                config, Files.readString(Harness.testConfig()).replaceAll("(?s)\npassthrough:.*?\n\n", "\n\n"));
        harness = Harness.start(store, false, Map.of("GATEWAY_CONFIG", config.toString()));
        List<String> rows = rows();
        assertThat(rows).hasSizeGreaterThan(300);
        rows.addAll(NEAR_MISSES);

        int charged = 0;
        List<String> wrong = new ArrayList<>();
        for (String row : rows) {
            String[] parts = row.split(" ");
            String method = parts[0];
            String path =
                    parts[1].replace("/models/{id}", "/models/gpt-4o-mini").replace("{id}", "x1");
            String expected = parts[2];
            HttpResponse<String> answer;
            try {
                answer = send(method, path);
            } catch (java.io.IOException e) {
                throw new AssertionError(row + ": no answer", e);
            }
            String got = classify(answer);
            if (!got.equals(expected)) {
                wrong.add(row + " -> " + got + " (" + answer.statusCode() + " " + answer.body() + ")");
            }
            charged += expected.equals("404") ? 0 : 1;
        }

        assertThat(wrong)
                .as("rows the gateway does not treat as the table says")
                .isEmpty();
        assertThat(charged).isEqualTo(6);
        assertThat(harness.used(TENANT, "minute"))
                .as("only the metered and relayed rows were charged a request")
                .isEqualTo(charged);
        assertThat(harness.used(TENANT, "tokens-minute")).isPositive();
        assertThat(harness.metric("gateway_refusals_total", "endpoint", "other", "status", "404"))
                .isEqualTo(rows.size() - charged);
    }

    /** What the gateway did, read from the answer alone. */
    private static String classify(HttpResponse<String> answer) throws Exception {
        boolean tokens =
                answer.headers().firstValue("x-ratelimit-remaining-tokens").isPresent();
        boolean requests =
                answer.headers().firstValue("x-ratelimit-remaining-requests").isPresent();
        if (answer.statusCode() == 200 && tokens && requests) {
            return "metered";
        }
        if (answer.statusCode() == 200 && requests) {
            return "relayed";
        }
        if (answer.statusCode() == 404 && !requests && !tokens) {
            JsonNode error = OpenAi.JSON.readTree(answer.body()).path("error");
            return error.path("code").asText().equals("unknown_url") ? "404" : "404 (" + error + ")";
        }
        return "status " + answer.statusCode();
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        String body = method.equals("POST") ? BODIES.getOrDefault(path, "{}") : "";
        HttpRequest.BodyPublisher publisher =
                body.isEmpty() ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body);
        HttpRequest request = HttpRequest.newBuilder(URI.create(harness.base() + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer demo-enterprise")
                .header("Content-Type", "application/json")
                .method(method, publisher)
                .build();
        return harness.http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> rows() throws Exception {
        try (InputStream in = EndpointTableTest.class.getResourceAsStream("openai-sdk-endpoints.txt")) {
            List<String> rows = new ArrayList<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    rows.add(line.strip());
                }
            }
            return rows;
        }
    }
}
