package dev.ratelimit.gateway.mock;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.gemini.GeminiTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The built-in mock model's Gemini API ({@code /v1beta}): {@code generateContent}, {@code
 * streamGenerateContent} (server-sent events with {@code alt=sse}, else a streamed JSON array, one
 * chunk per word, each with the {@code usageMetadata} so far and the last with its {@code
 * finishReason}), {@code countTokens} and the model list, echoing the last user text with {@code
 * usageMetadata}, deterministically. Its count stands in for Gemini's tokenizer: a token per four
 * characters (code points) of each text, rounded up, 1 per content, 258 per inline or file part
 * (Gemini's charge for a small image), function calls and responses as their JSON. A marker in the
 * last user text asks for an ending on demand: {@code [mock:slow]} (200 ms between chunks), {@code
 * [mock:break]} (a stream broken off halfway), {@code [mock:429]} (a 429 {@code RESOURCE_EXHAUSTED}
 * with a {@code RetryInfo} of 5 s).
 */
public final class GeminiMock extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** Contents counted as the gateway walks them, with the mock's text count, 258 a media part and 1 a content. */
    public static final GeminiTokens.Parts PARTS = new GeminiTokens.Parts(GeminiMock::text, 258, 1);

    private final transient Collection<String> models;
    private final AtomicLong ids = new AtomicLong();

    GeminiMock(Collection<String> models) {
        this.models = models;
    }

    /** A token per four code points, rounded up. */
    static long text(String text) {
        return (text.codePointCount(0, text.length()) + 3L) / 4;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getPathInfo() == null ? "" : request.getPathInfo();
        if (request.getMethod().equals("GET") && Gemini.isModelListing("GET", path)) {
            list(path, response);
            return;
        }
        Gemini.ModelCall called = Gemini.ModelCall.of(path);
        if (!request.getMethod().equals("POST") || called == null || !called.served()) {
            Gemini.error(response, 404, "The mock model has no " + request.getMethod() + " " + path + ".", null, null);
            return;
        }
        JsonNode body;
        try {
            body = OpenAi.JSON.readTree(request.getInputStream());
        } catch (JacksonException e) {
            Gemini.error(response, 400, "Not JSON.", null, null);
            return;
        }
        if (called.method().equals(Gemini.COUNT_TOKENS)) {
            OpenAi.json(response, 200, OpenAi.JSON.createObjectNode().put("totalTokens", PARTS.prompt(body)));
            return;
        }
        String said = lastUser(body);
        if (said.contains("[mock:429]")) {
            Gemini.error(response, 429, "The mock model's quota, on demand.", null, Duration.ofSeconds(5));
            return;
        }
        String whole = MockModel.reply(said.isEmpty() ? null : said);
        long max = body.path("generationConfig").path("maxOutputTokens").asLong(Long.MAX_VALUE);
        String reply = MockModel.cut(whole, max, GeminiMock::text);
        String finish = reply.equals(whole) ? "STOP" : "MAX_TOKENS";
        long input = PARTS.prompt(body);
        String id = "mock-" + ids.incrementAndGet();
        if (called.method().equals(Gemini.GENERATE)) {
            OpenAi.json(response, 200, chunk(id, called.model(), reply, finish, input, text(reply)));
            return;
        }
        stream(request, response, id, called.model(), reply, finish, input, said);
    }

    private static void stream(
            HttpServletRequest request,
            HttpServletResponse response,
            String id,
            String model,
            String reply,
            String finish,
            long input,
            String said)
            throws IOException {
        boolean sse = "sse".equals(request.getParameter("alt"));
        response.setStatus(200);
        response.setContentType(sse ? "text/event-stream" : "application/json");
        response.setCharacterEncoding("UTF-8");
        ServletOutputStream out = response.getOutputStream();
        String[] words = reply.split(" ");
        StringBuilder sent = new StringBuilder();
        if (!sse) {
            write(out, "[");
        }
        for (int i = 0; i < words.length; i++) {
            if (said.contains("[mock:break]") && i == words.length / 2) {
                throw new IllegalStateException("the mock model breaks the stream off, on demand");
            }
            if (said.contains("[mock:slow]") && i > 0) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
            String word = i == 0 ? words[i] : " " + words[i];
            sent.append(word);
            boolean last = i == words.length - 1;
            ObjectNode chunk = chunk(id, model, word, last ? finish : null, input, text(sent.toString()));
            write(out, sse ? "data: " + chunk + "\r\n\r\n" : (i == 0 ? "" : ",\r\n") + chunk);
        }
        if (!sse) {
            write(out, "]");
        }
    }

    /** One {@code GenerateContentResponse}: a candidate with {@code text}, and the usage so far. */
    private static ObjectNode chunk(
            String id, String model, String text, @Nullable String finish, long input, long output) {
        ObjectNode chunk = OpenAi.JSON.createObjectNode();
        ObjectNode candidate = chunk.putArray("candidates").addObject();
        ObjectNode content = candidate.putObject("content");
        content.putArray("parts").addObject().put("text", text);
        content.put("role", "model");
        if (finish != null) {
            candidate.put("finishReason", finish);
        }
        candidate.put("index", 0);
        chunk.putObject("usageMetadata")
                .put("promptTokenCount", input)
                .put("candidatesTokenCount", output)
                .put("totalTokenCount", input + output);
        chunk.put("modelVersion", model).put("responseId", id);
        return chunk;
    }

    private void list(String path, HttpServletResponse response) throws IOException {
        if (path.equals("/models")) {
            ObjectNode list = OpenAi.JSON.createObjectNode();
            list.putArray("models").add(model(MockModel.MODEL));
            for (String model : models) {
                list.withArray("models").add(model(model));
            }
            OpenAi.json(response, 200, list);
            return;
        }
        OpenAi.json(response, 200, model(path.substring("/models/".length())));
    }

    private static ObjectNode model(String id) {
        ObjectNode model = OpenAi.JSON
                .createObjectNode()
                .put("name", "models/" + id)
                .put("displayName", id)
                .put("inputTokenLimit", 1_048_576)
                .put("outputTokenLimit", 8_192);
        model.putArray("supportedGenerationMethods").add(Gemini.GENERATE).add(Gemini.COUNT_TOKENS);
        return model;
    }

    /** The text of the last content whose role is {@code user} (or none), its text parts joined. */
    private static String lastUser(JsonNode body) {
        String last = "";
        for (JsonNode content : body.path("contents")) {
            String role = content.path("role").asText("user");
            if (!role.equals("user")) {
                continue;
            }
            StringBuilder text = new StringBuilder();
            for (JsonNode part : content.path("parts")) {
                text.append(part.path("text").asText(""));
            }
            last = text.toString();
        }
        return last;
    }

    private static void write(ServletOutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
