package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.errors.ClientException;
import com.google.genai.types.GenerateContentConfig;
import com.google.genai.types.GenerateContentResponse;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The gateway in front of a stub Gemini upstream ({@code upstreams:} with {@code protocol: gemini}),
 * driven by google-genai and raw HTTP: each kind of token in {@code usageMetadata} at its price
 * (cached input at the cached price, thoughts at the output price, tool-use prompt tokens as input),
 * a stream settled to its last {@code usageMetadata}, a broken stream settled to what it produced,
 * the upstream's key and never the client's, and an upstream 429 {@code RESOURCE_EXHAUSTED} whose
 * {@code retryDelay} starts the model's cooldown; in memory and on Redis.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
class GeminiUpstreamTest {

    static final String MODEL = "gemini-money-1";
    static final String UPSTREAM_KEY = "sk-gemini-upstream";

    /** 1,000 prompt tokens (400 of them cached), 100 of tool use, 200 candidates' and 300 thinking. */
    static final String USAGE_BY_KIND = "{\"promptTokenCount\":1000,\"cachedContentTokenCount\":400,"
            + "\"toolUsePromptTokenCount\":100,\"candidatesTokenCount\":200,\"thoughtsTokenCount\":300,"
            + "\"totalTokenCount\":1600}";

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    private GeminiStub gemini;
    private Harness harness;

    @BeforeEach
    void start() throws Exception {
        gemini = GeminiStub.start();
        Path config = directory.resolve("gateway.yaml");
        String money = Files.readString(
                Path.of(SpendTest.class.getResource("gateway-money.yaml").toURI()));
        Files.writeString(
                config,
                money.replace(
                                "prices:\n",
                                "prices:\n  gemini-money*: { input: 1.00, cached-input: 0.10, output: 5.00 }\n")
                        + """

                        upstreams:
                          gemini:
                            url: %s
                            api-key: %s
                            protocol: gemini
                            models: ["gemini-*"]
                        """.formatted(gemini.baseUrl(), UPSTREAM_KEY));
        harness = Harness.start(store, false, Map.of("GATEWAY_CONFIG", config.toString()));
    }

    @AfterEach
    void stop() {
        harness.close();
        gemini.close();
    }

    @Test
    @DisplayName("usageMetadata by kind: cached input at its price, thoughts as output, tool use as input;"
            + " the upstream gets its key, never the client's")
    void eachKindAtItsPrice() throws Exception {
        gemini.enqueue(GeminiStub.plain(USAGE_BY_KIND));
        try (Client client = GeminiClientTest.client(harness, "dave-key", "v1beta")) {
            GenerateContentResponse answer = client.models.generateContent(
                    MODEL,
                    "hi",
                    GenerateContentConfig.builder().maxOutputTokens(1000).build());
            assertThat(answer.text()).isEqualTo("ok");
        }
        harness.awaitSettled("committed", "completed", "dave");
        assertThat(harness.used("dave", "spend-day"))
                .as("700 input at $1, 400 cached at $0.10, 500 output at $5 per million tokens")
                .isEqualTo(700 + 40 + 2_500);
        GeminiStub.Received received = gemini.received().get(0);
        assertThat(received.path()).isEqualTo("/v1beta/models/" + MODEL + ":generateContent");
        assertThat(received.googleKey()).isEqualTo(UPSTREAM_KEY);
        assertThat(received.query()).isNull();

        HttpResponse<String> listed =
                GeminiClientTest.send(harness, "GET", "/v1beta/models?pageSize=2&key=dave-key", null, "");
        assertThat(listed.statusCode()).isEqualTo(200);
        GeminiStub.Received listing = gemini.received().get(1);
        assertThat(listing.path()).isEqualTo("/v1beta/models");
        assertThat(listing.query()).as("the client's key is stripped").isEqualTo("pageSize=2");
        assertThat(listing.googleKey()).isEqualTo(UPSTREAM_KEY);
    }

    @Test
    @DisplayName("a stream is settled to the last chunk carrying usageMetadata, by kind")
    void streamSettlesToTheLastUsage() throws Exception {
        gemini.enqueue(GeminiStub.stream(
                List.of(
                        GeminiStub.chunk("Hel", null, "{\"promptTokenCount\":1000,\"candidatesTokenCount\":1}"),
                        GeminiStub.chunk("lo", null, "{\"promptTokenCount\":1000,\"candidatesTokenCount\":2}"),
                        GeminiStub.chunk(
                                " there",
                                "STOP",
                                "{\"promptTokenCount\":1000,\"cachedContentTokenCount\":400,"
                                        + "\"candidatesTokenCount\":200,\"thoughtsTokenCount\":300,"
                                        + "\"totalTokenCount\":1500}"),
                        GeminiStub.chunk("", null, null)),
                false));
        StringBuilder text = new StringBuilder();
        try (Client client = GeminiClientTest.client(harness, "dave-key", "v1beta");
                ResponseStream<GenerateContentResponse> stream = client.models.generateContentStream(
                        MODEL,
                        "stream",
                        GenerateContentConfig.builder().maxOutputTokens(1000).build())) {
            for (GenerateContentResponse chunk : stream) {
                text.append(chunk.text() == null ? "" : chunk.text());
            }
        }
        assertThat(text.toString()).isEqualTo("Hello there");
        assertThat(gemini.received().get(0).query()).isEqualTo("alt=sse");
        harness.awaitSettled("committed", "stream_completed", "dave");
        assertThat(harness.used("dave", "spend-day")).isEqualTo(600 + 40 + 2_500);
    }

    @Test
    @DisplayName("a streamed JSON array that breaks off: settled to what it produced, ended with an error element")
    void brokenArrayStream() throws Exception {
        gemini.enqueue(GeminiStub.stream(
                List.of(
                        GeminiStub.chunk("one", null, "{\"promptTokenCount\":50,\"candidatesTokenCount\":1}"),
                        GeminiStub.chunk(" two", null, "{\"promptTokenCount\":50,\"candidatesTokenCount\":2}")),
                true));
        HttpResponse<String> answer = GeminiClientTest.post(
                harness,
                "/v1beta/models/" + MODEL + ":streamGenerateContent",
                "dave-key",
                "{\"contents\":[{\"parts\":[{\"text\":\"go\"}]}]}");

        JsonNode array = OpenAi.JSON.readTree(answer.body());
        assertThat(array.size()).isEqualTo(3);
        assertThat(array.get(2).path("error").path("status").asText()).isEqualTo("UNAVAILABLE");
        harness.awaitSettled("committed", "stream_broken", "dave");
        assertThat(harness.used("dave", "spend-day"))
                .as("the 50 prompt tokens at $1 and the 2 produced at $5 per million")
                .isEqualTo(50 + 2 * 5);
    }

    @Test
    @DisplayName("an error chunk ends an alt=sse stream: relayed, the input and what was produced committed")
    void errorChunk() throws Exception {
        gemini.enqueue(GeminiStub.stream(
                List.of(
                        GeminiStub.chunk("one", null, "{\"promptTokenCount\":50,\"candidatesTokenCount\":1}"),
                        "{\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}"),
                false));
        HttpResponse<String> answer = GeminiClientTest.post(
                harness,
                "/v1beta/models/" + MODEL + ":streamGenerateContent?alt=sse",
                "dave-key",
                "{\"contents\":[{\"parts\":[{\"text\":\"go\"}]}]}");

        assertThat(answer.body()).contains("\"text\":\"one\"").contains("The model is overloaded.");
        harness.awaitSettled("committed", "stream_error", "dave");
        assertThat(harness.used("dave", "spend-day"))
                .as("the 50 prompt tokens at $1 and the 1 produced at $5 per million")
                .isEqualTo(50 + 5);
    }

    @Test
    @DisplayName("an upstream 429 RESOURCE_EXHAUSTED: relayed uncharged, its retryDelay starts the model's cooldown")
    void upstreamQuotaStartsACooldown() throws Exception {
        gemini.enqueue(GeminiStub.exhausted("2.5s"));
        HttpResponse<String> refused = GeminiClientTest.post(
                harness,
                "/v1beta/models/" + MODEL + ":generateContent",
                "dave-key",
                "{\"contents\":[{\"parts\":[{\"text\":\"hi\"}]}]}");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(OpenAi.JSON
                        .readTree(refused.body())
                        .path("error")
                        .path("status")
                        .asText())
                .isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(refused.headers().firstValue("Retry-After")).hasValue("3");
        assertThat(harness.cooling(MODEL)).isTrue();

        try (Client client = GeminiClientTest.client(harness, "dave-key")) {
            ClientException cooling =
                    catchThrowableOfType(ClientException.class, () -> client.models.generateContent(MODEL, "hi", null));
            assertThat(cooling.code()).isEqualTo(429);
            assertThat(cooling.status()).isEqualTo("RESOURCE_EXHAUSTED");
            String delay = GeminiClientTest.detail(GeminiClientTest.details(cooling.message()), "google.rpc.RetryInfo")
                    .path("retryDelay")
                    .asText();
            assertThat(Gemini.parseDuration(delay))
                    .isNotNull()
                    .isPositive()
                    .isLessThanOrEqualTo(java.time.Duration.ofMillis(2_500));
        }
        assertThat(gemini.received())
                .as("the cooldown held the second call back")
                .hasSize(1);
        assertThat(harness.used("dave", "spend-day")).isZero();
        assertThat(harness.used("dave", "minute")).isZero();
    }
}
