package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.batch.AnthropicBatchServlet;
import dev.ratelimit.gateway.batch.BatchServlet;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
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
 * Nothing slips through: every endpoint openai-java, anthropic-java and google-genai (Gemini's API)
 * expose ({@code openai-sdk-endpoints.txt}, {@code anthropic-sdk-endpoints.txt}, {@code
 * gemini-sdk-endpoints.txt}: one row per method and path with
 * what the gateway does with it) is sent over HTTP, in each API's style, to a gateway with the
 * default pass-through list in front of its mock model. A metered row answers with token headers, a
 * relayed row with request headers only, Anthropic's {@code count_tokens} and Gemini's {@code
 * countTokens} with the gateway's estimate and no rate-limit header, and every other row is a 404 in the caller's error shape with
 * no rate-limit header; the tenant's request window then holds exactly the metered and relayed rows.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
class EndpointTableTest {

    private static final String TENANT = "demo-user-enterprise";

    /** One SDK's table: how its clients authenticate, what valid bodies look like, how answers read. */
    enum Api {
        OPENAI(
                "openai-sdk-endpoints.txt",
                300,
                Map.of("Authorization", "Bearer demo-enterprise"),
                Map.of(
                        "/v1/chat/completions",
                        "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                        "/v1/completions",
                        "{\"model\":\"gpt-4o-mini\",\"prompt\":\"Hi\",\"max_tokens\":20}",
                        "/v1/embeddings",
                        "{\"model\":\"text-embedding-3-small\",\"input\":\"Hi\"}",
                        "/v1/responses",
                        "{\"model\":\"gpt-4o-mini\",\"input\":\"Hi\",\"max_output_tokens\":20}"),
                // paths no SDK sends but a client might: near misses of the metered paths are not metered by accident
                List.of(
                        "POST /v1/chat/completions/ 404",
                        "POST /v1/responses/ 404",
                        "PUT /v1/responses 404",
                        "PATCH /v1/completions 404",
                        "GET /v1/embeddings 404",
                        "DELETE /v1/models 404",
                        "POST /v1/chat 404",
                        "POST /v1 404"),
                "x-ratelimit-remaining-tokens",
                "x-ratelimit-remaining-requests"),
        ANTHROPIC(
                "anthropic-sdk-endpoints.txt",
                250,
                Map.of("x-api-key", "demo-enterprise", "anthropic-version", "2023-06-01"),
                Map.of(
                        "/v1/messages",
                        ANTHROPIC_BODY,
                        "/v1/messages/count_tokens",
                        ANTHROPIC_BODY.replace(",\"max_tokens\":20", "")),
                List.of("POST /v1/messages/ 404", "POST /v1/messages/count_tokens/ 404", "POST /v1/message 404"),
                "anthropic-ratelimit-tokens-remaining",
                "anthropic-ratelimit-requests-remaining"),
        GEMINI(
                "gemini-sdk-endpoints.txt",
                40,
                Map.of("x-goog-api-key", "demo-enterprise"),
                Map.of(
                        "/v1beta/models/gemini-2.0-flash:generateContent",
                        GEMINI_BODY,
                        "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
                        GEMINI_BODY,
                        "/v1beta/models/gemini-2.0-flash:countTokens",
                        GEMINI_BODY,
                        "/v1/models/gemini-2.0-flash:generateContent",
                        GEMINI_BODY),
                // near misses, and Google's stable version, where the SDK sends a model's methods by default
                List.of(
                        "POST /v1/models/{model}:generateContent metered",
                        "POST /v1beta/models/{model}:generateContent/ 404",
                        "POST /v1beta/models/{model}:generatecontent 404",
                        "PUT /v1beta/models/{model}:generateContent 404",
                        "GET /v1beta/models/{model}:streamGenerateContent 404",
                        "POST /v1beta/models 404",
                        "POST /v1beta/tunedModels/{id}:generateContent 404",
                        "GET /v1beta 404"),
                // Gemini's API has no rate-limit headers of its own: the IETF draft's name the windows
                "RateLimit",
                "RateLimit-Policy");

        final String table;
        final int atLeast;
        final Map<String, String> auth;
        final Map<String, String> bodies;
        final List<String> nearMisses;
        final String tokensHeader;
        final String requestsHeader;

        Api(
                String table,
                int atLeast,
                Map<String, String> auth,
                Map<String, String> bodies,
                List<String> nearMisses,
                String tokensHeader,
                String requestsHeader) {
            this.table = table;
            this.atLeast = atLeast;
            this.auth = auth;
            this.bodies = bodies;
            this.nearMisses = nearMisses;
            this.tokensHeader = tokensHeader;
            this.requestsHeader = requestsHeader;
        }

        /** Whether a 404's body is this API's error shape for an unknown path. */
        boolean unknownPath(JsonNode body) {
            return switch (this) {
                case OPENAI -> body.path("error").path("code").asText().equals("unknown_url");
                case ANTHROPIC ->
                    body.path("type").asText().equals("error")
                            && body.path("error").path("type").asText().equals("not_found_error");
                case GEMINI ->
                    body.path("error").path("code").asInt() == 404
                            && body.path("error").path("status").asText().equals("NOT_FOUND");
            };
        }

        /** Whether an answer reports token windows: the family's header, or for Gemini a token window in {@code RateLimit}. */
        boolean tokens(HttpResponse<String> answer) {
            java.util.Optional<String> header = answer.headers().firstValue(tokensHeader);
            return this == GEMINI
                    ? header.filter(value -> value.contains("tokens-")).isPresent()
                    : header.isPresent();
        }
    }

    private static final String GEMINI_BODY = "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hi\"}]}],"
            + "\"generationConfig\":{\"maxOutputTokens\":20}}";

    private static final String ANTHROPIC_BODY = "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":20,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

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
    void everyOpenAiEndpoint() throws Exception {
        check(Api.OPENAI, 6);
    }

    @Test
    @DisplayName("every google-genai (Gemini API) endpoint is metered (generateContent, streamGenerateContent),"
            + " estimated uncharged (countTokens), relayed (GET /v1beta/models, /v1beta/models/{model}) or Google's"
            + " 404 uncharged")
    void everyGeminiEndpoint() throws Exception {
        check(Api.GEMINI, 5);
    }

    @Test
    @DisplayName("every anthropic-java endpoint is metered (POST /v1/messages), estimated uncharged (count_tokens),"
            + " relayed (GET /v1/models, /v1/models/{id}), a Message Batches row (owner only) or Anthropic's 404"
            + " uncharged")
    void everyAnthropicEndpoint() throws Exception {
        check(Api.ANTHROPIC, 3);
    }

    /** Sends every row of the API's table and its near misses; {@code charged} rows are metered or relayed. */
    private void check(Api api, int charged) throws Exception {
        Path config = dir.resolve("gateway.yaml");
        // the test configuration without its passthrough: list, so the defaults apply
        Files.writeString(
                config, Files.readString(Harness.testConfig()).replaceAll("(?s)\npassthrough:.*?\n\n", "\n\n"));
        harness = Harness.start(store, false, Map.of("GATEWAY_CONFIG", config.toString()));
        List<String> rows = rows(api.table);
        assertThat(rows).hasSizeGreaterThan(api.atLeast);
        rows.addAll(api.nearMisses);

        int expectedCharged = 0;
        int refused = 0;
        List<String> wrong = new ArrayList<>();
        for (String row : rows) {
            String[] parts = row.split(" ");
            String method = parts[0];
            String path = parts[1].replace("{model}", "gemini-2.0-flash")
                    .replace("/models/{id}", "/models/gpt-4o-mini")
                    .replace("{id}", "x1");
            String expected = parts[2];
            HttpResponse<String> answer;
            try {
                answer = send(api, method, path);
            } catch (java.io.IOException e) {
                throw new AssertionError(row + ": no answer", e);
            }
            String got = expected.equals("batch") ? batch(answer) : classify(api, answer);
            if (!got.equals(expected)) {
                wrong.add(row + " -> " + got + " (" + answer.statusCode() + " " + answer.body() + ")");
            }
            expectedCharged += expected.equals("metered") || expected.equals("relayed") ? 1 : 0;
            refused += expected.equals("404") ? 1 : 0;
        }

        assertThat(wrong)
                .as("rows the gateway does not treat as the table says")
                .isEmpty();
        assertThat(expectedCharged).isEqualTo(charged);
        assertThat(harness.used(TENANT, "minute"))
                .as("only the metered and relayed rows were charged a request")
                .isEqualTo(charged);
        assertThat(harness.used(TENANT, "tokens-minute")).isPositive();
        assertThat(harness.metric("gateway_refusals_total", "endpoint", "other", "status", "404"))
                .isEqualTo(refused);
    }

    /**
     * A batch row ({@link BatchServlet}, {@link AnthropicBatchServlet}) before any batch or file
     * exists: a 4xx in the API's error shape (not owned, or a bad body) or an empty list of the
     * caller's batches, no rate-limit header.
     */
    private static String batch(HttpResponse<String> answer) throws Exception {
        boolean anyLimit = answer.headers().map().keySet().stream()
                .anyMatch(name -> name.toLowerCase(java.util.Locale.ROOT).contains("ratelimit"));
        JsonNode body = OpenAi.JSON.readTree(answer.body());
        boolean refused = answer.statusCode() / 100 == 4
                && body.path("error").path("message").isTextual();
        // a list of the caller's batches, empty before any exists (the mock model keeps batches)
        boolean emptyList = answer.statusCode() == 200
                && body.path("data").isArray()
                && body.path("data").isEmpty();
        return (refused || emptyList) && !anyLimit ? "batch" : "status " + answer.statusCode();
    }

    /** What the gateway did, read from the answer alone. */
    private static String classify(Api api, HttpResponse<String> answer) throws Exception {
        boolean tokens = api.tokens(answer);
        boolean requests = answer.headers().firstValue(api.requestsHeader).isPresent();
        // relayed paths are the library filter's, whose request headers are OpenAI's family for both APIs
        boolean relayed =
                answer.headers().firstValue("x-ratelimit-remaining-requests").isPresent();
        boolean anyLimit = answer.headers().map().keySet().stream()
                .anyMatch(name -> name.toLowerCase(java.util.Locale.ROOT).contains("ratelimit"));
        if (answer.statusCode() == 200 && tokens && requests) {
            return "metered";
        }
        if (answer.statusCode() == 200 && !tokens && relayed) {
            return "relayed";
        }
        if (answer.statusCode() == 200 && !anyLimit) {
            JsonNode body = OpenAi.JSON.readTree(answer.body());
            return body.path("input_tokens").asLong() > 0
                            || body.path("totalTokens").asLong() > 0
                    ? "estimated"
                    : "200 (" + body + ")";
        }
        if (answer.statusCode() == 404 && !anyLimit) {
            JsonNode body = OpenAi.JSON.readTree(answer.body());
            return api.unknownPath(body) ? "404" : "404 (" + body + ")";
        }
        return "status " + answer.statusCode();
    }

    private HttpResponse<String> send(Api api, String method, String path) throws Exception {
        String body = method.equals("POST") ? api.bodies.getOrDefault(path, "{}") : "";
        HttpRequest.BodyPublisher publisher =
                body.isEmpty() ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body);
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(harness.base() + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .method(method, publisher);
        api.auth.forEach(request::header);
        return harness.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<String> rows(String table) throws Exception {
        try (InputStream in = EndpointTableTest.class.getResourceAsStream(table)) {
            List<String> rows = new ArrayList<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    rows.add(line.strip());
                }
            }
            return rows;
        }
    }

    @Test
    @DisplayName("the configuration refuses to relay exactly the paths the OpenAI protocol meters")
    void meteredPathsAreTheEndpointTable() {
        assertThat(dev.ratelimit.gateway.config.GatewayConfig.Route.METERED_PATHS)
                .containsExactlyInAnyOrderElementsOf(
                        java.util.Arrays.stream(dev.ratelimit.gateway.protocol.openai.OpenAiEndpoint.values())
                                .map(endpoint -> "/v1" + endpoint.upstreamPath())
                                .toList());
    }
}
