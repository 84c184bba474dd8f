package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.fakemodel.Call;
import dev.ratelimit.fakemodel.Exchange;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Google's Gemini API as the gateway's tests script it ({@code /v1beta}), on the project's one fake
 * model ({@link FakeModel}): each request takes the next queued behaviour, or a plain answer with
 * {@link #PLAIN_USAGE}. It records what it received.
 */
final class GeminiStub implements AutoCloseable {

    /** The usage of a plain answer: 100 prompt tokens, 20 candidates' tokens. */
    static final String PLAIN_USAGE = "{\"promptTokenCount\":100,\"candidatesTokenCount\":20,\"totalTokenCount\":120}";

    /** What the stub saw of one request. */
    record Received(
            String path, @Nullable String query, @Nullable String googleKey, JsonNode body) {

        static Received of(Call call) {
            return new Received(call.path(), call.query(), call.header("x-goog-api-key"), call.body());
        }
    }

    /** How the stub answers one request. */
    @FunctionalInterface
    interface Behaviour {
        void answer(Call request, Exchange response) throws Exception;
    }

    private final FakeModel fake;

    private GeminiStub(FakeModel fake) {
        this.fake = fake;
    }

    static GeminiStub start() {
        return new GeminiStub(FakeModel.builder()
                .name("gemini-stub")
                .answer((call, exchange) -> plain(PLAIN_USAGE).answer(call, exchange))
                .start());
    }

    /** The base URL, as Google's is {@code https://generativelanguage.googleapis.com/v1beta}. */
    String baseUrl() {
        return fake.geminiBaseUrl();
    }

    void enqueue(Behaviour behaviour) {
        fake.enqueue(behaviour::answer);
    }

    /** What the stub has received, oldest first. */
    List<Received> received() {
        return fake.calls().stream().map(Received::of).toList();
    }

    /** A plain answer: one candidate saying "ok", with {@code usage} as its {@code usageMetadata}. */
    static Behaviour plain(String usage) {
        return (request, response) -> response.json(200, chunk("ok", "STOP", usage));
    }

    /**
     * A stream of {@code chunks} (each a whole {@code GenerateContentResponse}), as server-sent events
     * when the request asked {@code alt=sse}, else as a JSON array; {@code breakOff} drops the
     * connection after them instead of ending the stream.
     */
    static Behaviour stream(List<String> chunks, boolean breakOff) {
        return (request, response) -> {
            boolean sse = "sse".equals(request.queryParameter("alt"));
            response.status(200).startStream(sse ? "text/event-stream" : "application/json");
            if (!sse) {
                response.send("[");
            }
            for (int i = 0; i < chunks.size(); i++) {
                response.send(sse ? "data: " + chunks.get(i) + "\r\n\r\n" : (i == 0 ? "" : ",\r\n") + chunks.get(i));
            }
            if (breakOff) {
                response.breakOff();
            }
            if (!sse) {
                response.send("]");
            }
        };
    }

    /** One {@code GenerateContentResponse}: a candidate with {@code text}, its finish reason, and the usage (or none). */
    static String chunk(String text, @Nullable String finish, @Nullable String usage) {
        return "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
                + OpenAi.JSON.getNodeFactory().textNode(text)
                + "}],\"role\":\"model\"}" + (finish == null ? "" : ",\"finishReason\":\"" + finish + "\"")
                + ",\"index\":0}]" + (usage == null ? "" : ",\"usageMetadata\":" + usage) + "}";
    }

    /** Google's 429 {@code RESOURCE_EXHAUSTED} with a {@code RetryInfo} of {@code retryDelay}. */
    static Behaviour exhausted(String retryDelay) {
        return (request, response) -> response.write(
                429,
                "application/json",
                ("{\"error\":{\"code\":429,\"message\":\"Quota exceeded.\",\"status\":\"RESOURCE_EXHAUSTED\","
                                + "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\",\"violations\":"
                                + "[{\"quotaMetric\":\"generativelanguage.googleapis.com/generate_content_requests\","
                                + "\"quotaId\":\"GenerateRequestsPerMinutePerProjectPerModel\",\"quotaValue\":\"10\"}]},"
                                + "{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\""
                                + retryDelay + "\"}]}}")
                        .getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        fake.close();
    }
}
