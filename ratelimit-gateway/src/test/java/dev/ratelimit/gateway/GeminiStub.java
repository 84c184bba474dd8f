package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A Gemini API upstream the tests script ({@code /v1beta}): each request takes the next queued
 * behaviour, or a plain answer with {@link #PLAIN_USAGE}. It records what it received.
 */
final class GeminiStub extends QueuedStub<GeminiStub.Behaviour, GeminiStub.Received> {

    /** The usage of a plain answer: 100 prompt tokens, 20 candidates' tokens. */
    static final String PLAIN_USAGE = "{\"promptTokenCount\":100,\"candidatesTokenCount\":20,\"totalTokenCount\":120}";

    /** What the stub saw of one request. */
    record Received(
            String path, @Nullable String query, @Nullable String googleKey, JsonNode body) {}

    @FunctionalInterface
    interface Behaviour {
        void answer(HttpServletRequest request, HttpServletResponse response) throws Exception;
    }

    private GeminiStub() throws Exception {}

    static GeminiStub start() throws Exception {
        return new GeminiStub();
    }

    /** The base URL, as Google's is {@code https://generativelanguage.googleapis.com/v1beta}. */
    String baseUrl() {
        return "http://127.0.0.1:" + port() + "/v1beta";
    }

    @Override
    void serve(HttpServletRequest request, HttpServletResponse response) throws IOException {
        JsonNode body = body(request);
        Behaviour behaviour = next(new Received(
                request.getRequestURI(), request.getQueryString(), request.getHeader("x-goog-api-key"), body));
        try {
            (behaviour == null ? plain(PLAIN_USAGE) : behaviour).answer(request, response);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    /** A plain answer: one candidate saying "ok", with {@code usage} as its {@code usageMetadata}. */
    static Behaviour plain(String usage) {
        return (request, response) -> write(response, 200, "application/json", chunk("ok", "STOP", usage));
    }

    /**
     * A stream of {@code chunks} (each a whole {@code GenerateContentResponse}), as server-sent events
     * when the request asked {@code alt=sse}, else as a JSON array; {@code breakOff} drops the
     * connection after them instead of ending the stream.
     */
    static Behaviour stream(List<String> chunks, boolean breakOff) {
        return (request, response) -> {
            boolean sse = "sse".equals(request.getParameter("alt"));
            response.setStatus(200);
            response.setContentType(sse ? "text/event-stream" : "application/json");
            var out = response.getOutputStream();
            if (!sse) {
                out.write('[');
            }
            for (int i = 0; i < chunks.size(); i++) {
                String framed = sse ? "data: " + chunks.get(i) + "\r\n\r\n" : (i == 0 ? "" : ",\r\n") + chunks.get(i);
                out.write(framed.getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
            if (breakOff) {
                throw new IllegalStateException("the stub breaks the stream off");
            }
            if (!sse) {
                out.write(']');
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
        return (request, response) -> write(
                response,
                429,
                "application/json",
                "{\"error\":{\"code\":429,\"message\":\"Quota exceeded.\",\"status\":\"RESOURCE_EXHAUSTED\","
                        + "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\",\"violations\":"
                        + "[{\"quotaMetric\":\"generativelanguage.googleapis.com/generate_content_requests\","
                        + "\"quotaId\":\"GenerateRequestsPerMinutePerProjectPerModel\",\"quotaValue\":\"10\"}]},"
                        + "{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"" + retryDelay
                        + "\"}]}}");
    }

    static void write(HttpServletResponse response, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.setContentType(type);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }
}
