package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.errors.ClientException;
import com.google.genai.types.CountTokensResponse;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import dev.ratelimit.gateway.mock.MockModel;
import dev.ratelimit.gateway.protocol.gemini.GeminiTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Google's Gen AI Java SDK (google-genai) pointed at the gateway and its built-in mock model over
 * real HTTP: plain and streamed calls charged their {@code usageMetadata} exactly, a refusal as the
 * SDK's {@link ClientException} with the retry delay in its details, {@code countTokens} and unknown
 * paths uncharged, bad input a 400 in Google's shape, the key never logged; in memory and on Redis.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
class GeminiClientTest {

    static final String MODEL = "gemini-2.0-flash";
    private static final String TENANT = "demo-user-enterprise";

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

    private void start() throws Exception {
        harness = Harness.start(
                store, false, Map.of("ACCESS_LOG", dir.resolve("access.log").toString()));
    }

    /**
     * The SDK pointed at the gateway, without retries (a refusal surfaces at once), on its default
     * API version for a base URL of one's own ({@code /v1}).
     */
    static Client client(Harness harness, String key) {
        return client(harness, key, null);
    }

    /** The SDK on {@code apiVersion} ({@code v1beta}, as Google's own base URL gets), or its default. */
    static Client client(Harness harness, String key, @Nullable String apiVersion) {
        HttpOptions.Builder options = HttpOptions.builder()
                .baseUrl(harness.base())
                .retryOptions(HttpRetryOptions.builder().attempts(1).build());
        if (apiVersion != null) {
            options.apiVersion(apiVersion);
        }
        return Client.builder()
                .apiKey(key)
                .vertexAI(false)
                .httpOptions(options.build())
                .build();
    }

    static long total(GenerateContentResponseUsageMetadata usage) {
        return usage.totalTokenCount().orElseThrow();
    }

    @Test
    @DisplayName("generateContent: charged its usageMetadata exactly, one request and its total tokens")
    void plainIsChargedItsUsage() throws Exception {
        start();
        try (Client client = client(harness, "demo-enterprise")) {
            GenerateContentResponse answer = client.models.generateContent(
                    MODEL,
                    "Hello Gemini",
                    GenerateContentConfig.builder().maxOutputTokens(100).build());

            assertThat(answer.text()).contains("Hello Gemini");
            GenerateContentResponseUsageMetadata usage = answer.usageMetadata().orElseThrow();
            assertThat(usage.promptTokenCount().orElseThrow())
                    .isEqualTo(MockModel.GEMINI_PARTS.prompt(OpenAi.JSON.readTree(
                            "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Hello Gemini\"}]}]}")));
            harness.awaitSettled("committed", "completed", TENANT);
            assertThat(harness.used(TENANT, "tokens-minute")).isEqualTo(total(usage));
            assertThat(harness.used(TENANT, "minute")).isEqualTo(1);
        }
    }

    @Test
    @DisplayName("generateContentStream (alt=sse, under /v1beta): charged the last chunk's usageMetadata exactly")
    void streamIsChargedTheLastUsage() throws Exception {
        start();
        try (Client client = client(harness, "demo-enterprise", "v1beta")) {
            StringBuilder text = new StringBuilder();
            GenerateContentResponseUsageMetadata last = null;
            int chunks = 0;
            try (ResponseStream<GenerateContentResponse> stream = client.models.generateContentStream(
                    MODEL,
                    "Stream to me",
                    GenerateContentConfig.builder().maxOutputTokens(200).build())) {
                for (GenerateContentResponse chunk : stream) {
                    chunks++;
                    text.append(chunk.text());
                    if (chunk.usageMetadata().isPresent()) {
                        last = chunk.usageMetadata().get();
                    }
                }
            }
            assertThat(chunks).isGreaterThan(3);
            assertThat(text.toString()).contains("Stream to me");
            assertThat(last).isNotNull();
            harness.awaitSettled("committed", "stream_completed", TENANT);
            assertThat(harness.used(TENANT, "tokens-minute")).isEqualTo(total(last));
        }
    }

    @Test
    @DisplayName("streamGenerateContent without alt=sse: a streamed JSON array, relayed whole, charged its last usage")
    void jsonArrayStream() throws Exception {
        start();
        HttpResponse<String> answer = post(
                harness,
                "/v1beta/models/" + MODEL + ":streamGenerateContent",
                "demo-enterprise",
                "{\"contents\":[{\"parts\":[{\"text\":\"An array, please\"}]}]}");

        assertThat(answer.statusCode()).isEqualTo(200);
        JsonNode array = OpenAi.JSON.readTree(answer.body());
        assertThat(array.isArray()).isTrue();
        assertThat(array.size()).isGreaterThan(3);
        JsonNode usage = array.get(array.size() - 1).path("usageMetadata");
        harness.awaitSettled("committed", "stream_completed", TENANT);
        assertThat(harness.used(TENANT, "tokens-minute"))
                .isEqualTo(usage.path("totalTokenCount").asLong());
        assertThat(usage.path("totalTokenCount").asLong()).isPositive();
    }

    @Test
    @DisplayName("a refusal is the SDK's ClientException: 429, RESOURCE_EXHAUSTED, QuotaFailure and RetryInfo readable")
    void refusalIsTheSdksClientError() throws Exception {
        start();
        try (Client client = client(harness, "demo-free")) {
            for (int i = 0; i < 5; i++) { // the free tier's minute: 5 requests
                client.models.generateContent(MODEL, "call " + i, null);
            }
            ClientException refused = catchThrowableOfType(
                    ClientException.class, () -> client.models.generateContent(MODEL, "one too many", null));

            assertThat(refused.code()).isEqualTo(429);
            assertThat(refused.status()).isEqualTo("RESOURCE_EXHAUSTED");
            List<JsonNode> details = details(refused.message());
            JsonNode retry = detail(details, "google.rpc.RetryInfo");
            assertThat(retry.path("retryDelay").asText())
                    .as("the delay to the millisecond: the minute's first request leaves it in 60 s")
                    .isEqualTo("60.000s");
            JsonNode violation = detail(details, "google.rpc.QuotaFailure")
                    .path("violations")
                    .path(0);
            assertThat(violation.path("quotaId").asText()).isEqualTo("minute");
            assertThat(violation.path("quotaMetric").asText()).isEqualTo("ratelimit/requests");
            assertThat(violation.path("quotaValue").asText()).isEqualTo("5");
            assertThat(violation.path("quotaDimensions").path("level").asText()).isEqualTo("caller");
            assertThat(refused.message()).contains("tenant 'demo-user-free'");
        }
        HttpResponse<String> raw = post(
                harness,
                "/v1beta/models/" + MODEL + ":generateContent",
                "demo-free",
                "{\"contents\":[{\"parts\":[{\"text\":\"raw\"}]}]}");
        assertThat(raw.statusCode()).isEqualTo(429);
        assertThat(raw.headers().firstValue("Retry-After")).hasValue("60");
        assertThat(harness.used("demo-user-free", "minute")).isEqualTo(5);
    }

    @Test
    @DisplayName("countTokens: the gateway's own estimate, charged nothing, never relayed")
    void countTokensIsUncharged() throws Exception {
        start();
        try (Client client = client(harness, "demo-enterprise")) {
            CountTokensResponse counted = client.models.countTokens(MODEL, "How many tokens is this?", null);

            assertThat(counted.totalTokens().orElseThrow()).isPositive();
            assertThat(counted.totalTokens().orElseThrow()).isEqualTo((int) new GeminiTokens()
                    .prompt(OpenAi.JSON.readTree(
                            "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"How many tokens is"
                                    + " this?\"}]}]}")));
        }
        assertThat(harness.used(TENANT, "minute")).isZero();
        assertThat(harness.used(TENANT, "tokens-minute")).isZero();
    }

    @Test
    @DisplayName("paths the gateway does not serve: Google's 404 NOT_FOUND, charged nothing; the model list relayed")
    void unknownPathsAreGoogles404() throws Exception {
        start();
        for (String[] request : new String[][] {
            {"GET", "/v1beta/files"},
            {"POST", "/v1beta/models/" + MODEL + ":embedContent"},
            {"POST", "/v1beta/models/" + MODEL + ":batchGenerateContent"},
            {"GET", "/v1beta/models/" + MODEL + ":generateContent"},
            {"DELETE", "/v1beta/models/" + MODEL},
            {"POST", "/v1beta/cachedContents"},
            {"POST", "/v1beta/models/" + MODEL + ":generateContent/"},
            {"GET", "/v1beta"}
        }) {
            HttpResponse<String> answer = send(harness, request[0], request[1], "demo-enterprise", "{}");
            assertThat(answer.statusCode()).as("%s %s", request[0], request[1]).isEqualTo(404);
            JsonNode error = OpenAi.JSON.readTree(answer.body()).path("error");
            assertThat(error.path("code").asInt()).isEqualTo(404);
            assertThat(error.path("status").asText()).isEqualTo("NOT_FOUND");
        }
        try (Client client = client(harness, "demo-enterprise")) {
            ClientException notFound = catchThrowableOfType(
                    ClientException.class, () -> client.files.list(null).forEach(file -> {}));
            assertThat(notFound.code()).isEqualTo(404);
        }
        assertThat(harness.used(TENANT, "minute")).isZero();

        HttpResponse<String> models = send(harness, "GET", "/v1beta/models?key=demo-enterprise&pageSize=5", null, "");
        assertThat(models.statusCode()).isEqualTo(200);
        assertThat(OpenAi.JSON.readTree(models.body()).path("models").size()).isPositive();
        assertThat(models.headers().firstValue("x-ratelimit-remaining-requests"))
                .isPresent();
        HttpResponse<String> one = send(harness, "GET", "/v1beta/models/" + MODEL, "demo-enterprise", "");
        assertThat(OpenAi.JSON.readTree(one.body()).path("name").asText()).isEqualTo("models/" + MODEL);
        assertThat(harness.used(TENANT, "minute"))
                .as("the two listings, each a request")
                .isEqualTo(2);
        assertThat(harness.used(TENANT, "tokens-minute")).isZero();
    }

    @Test
    @DisplayName("bad input: 400 INVALID_ARGUMENT naming the field, never a 500, charged nothing")
    void badInputIs400() throws Exception {
        start();
        String path = "/v1beta/models/" + MODEL + ":generateContent";
        Map<String, String> bodies = Map.of(
                "{\"contents\":\"hi\"}", "contents",
                "{}", "contents",
                "{\"contents\":[{\"role\":\"user\"}]}", "contents[0].parts",
                "{\"contents\":[{\"parts\":[{\"text\":5}]}]}", "contents[0].parts[0].text",
                "{\"contents\":[{\"parts\":[{\"text\":\"x\"}]}],\"generationConfig\":{\"maxOutputTokens\":-1}}",
                        "generationConfig.maxOutputTokens",
                "{\"contents\":[{\"parts\":[{\"text\":\"x\"}]}],\"generationConfig\":{\"candidateCount\":99}}",
                        "generationConfig.candidateCount",
                "{\"contents\":[{\"parts\":[{\"text\":\"x\"}]}],\"systemInstruction\":7}", "systemInstruction");
        for (Map.Entry<String, String> body : bodies.entrySet()) {
            HttpResponse<String> answer = post(harness, path, "demo-enterprise", body.getKey());
            assertThat(answer.statusCode()).as(body.getKey()).isEqualTo(400);
            JsonNode error = OpenAi.JSON.readTree(answer.body()).path("error");
            assertThat(error.path("status").asText()).isEqualTo("INVALID_ARGUMENT");
            assertThat(error.path("details")
                            .path(0)
                            .path("fieldViolations")
                            .path(0)
                            .path("field")
                            .asText())
                    .as(body.getKey())
                    .isEqualTo(body.getValue());
        }
        for (String broken : List.of("{\"contents\":", "[1,2]", "", "{\"contents\":[]} trailing")) {
            HttpResponse<String> answer = post(harness, path, "demo-enterprise", broken);
            assertThat(answer.statusCode()).as(broken).isEqualTo(400);
            assertThat(OpenAi.JSON
                            .readTree(answer.body())
                            .path("error")
                            .path("status")
                            .asText())
                    .isEqualTo("INVALID_ARGUMENT");
        }
        assertThat(post(harness, "/v1beta/models/" + MODEL + ":countTokens", "demo-enterprise", "{}")
                        .statusCode())
                .isEqualTo(400);
        assertThat(harness.used(TENANT, "minute")).isZero();
    }

    @Test
    @DisplayName("keys: x-goog-api-key or ?key=, never logged; a missing or unknown one is Google's 401")
    void keys() throws Exception {
        start();
        String path = "/v1beta/models/" + MODEL + ":generateContent";
        String body = "{\"contents\":[{\"parts\":[{\"text\":\"key in the query\"}]}]}";
        HttpResponse<String> byQuery = send(harness, "POST", path + "?key=demo-enterprise", null, body);
        assertThat(byQuery.statusCode()).isEqualTo(200);

        for (String key : new String[] {null, "wrong-key"}) {
            HttpResponse<String> refused = post(harness, path, key, body);
            assertThat(refused.statusCode()).isEqualTo(401);
            assertThat(OpenAi.JSON
                            .readTree(refused.body())
                            .path("error")
                            .path("status")
                            .asText())
                    .isEqualTo("UNAUTHENTICATED");
        }
        HttpResponse<String> wrongQuery = send(harness, "POST", path + "?key=wrong-key", null, body);
        assertThat(wrongQuery.statusCode()).isEqualTo(401);
        harness.awaitSettled("committed", "completed", TENANT);
        harness.close();
        String log = Files.readString(dir.resolve("access.log"));
        assertThat(log)
                .contains("\"status\":200")
                .doesNotContain("demo-enterprise")
                .doesNotContain("wrong-key");
        harness = null;
    }

    /** The details the SDK puts in its message after {@code Details:}, one JSON object a line. */
    static List<JsonNode> details(String message) throws Exception {
        List<JsonNode> details = new ArrayList<>();
        int at = message.indexOf("Details:");
        assertThat(at).as("the SDK's message carries the details: %s", message).isNotNegative();
        for (String line : message.substring(at + "Details:".length()).split("\n")) {
            if (!line.isBlank()) {
                details.add(OpenAi.JSON.readTree(line.strip()));
            }
        }
        return details;
    }

    static JsonNode detail(List<JsonNode> details, String type) {
        return details.stream()
                .filter(detail -> detail.path("@type").asText().endsWith(type))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + type + " in " + details));
    }

    static HttpResponse<String> post(Harness harness, String path, @Nullable String key, String body) throws Exception {
        return send(harness, "POST", path, key, body);
    }

    static HttpResponse<String> send(Harness harness, String method, String path, @Nullable String key, String body)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(harness.base() + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body.isEmpty()
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header("x-goog-api-key", key);
        }
        return harness.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
