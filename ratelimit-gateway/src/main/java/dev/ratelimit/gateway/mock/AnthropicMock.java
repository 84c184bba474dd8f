package dev.ratelimit.gateway.mock;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The built-in mock model's Messages API ({@code POST /v1/messages}): plain and streamed answers
 * echoing the last user message, with {@code usage}, deterministically. Its input count stands in
 * for Claude's tokenizer: two tokens per seven characters (Anthropic's rule of thumb of about 3.5
 * characters a token), 3 per message and 3 for the reply, 300 when tools are offered, 1,000 an
 * image. A marker in the last user message asks for an ending on demand:
 *
 * <ul>
 *   <li>{@code [mock:slow]}: a stream that waits 200 ms before each event;
 *   <li>{@code [mock:error]}: a stream that sends an {@code error} event ({@code overloaded_error})
 *       after two words and ends;
 *   <li>{@code [mock:break]}: a stream that breaks off after two words;
 *   <li>{@code [mock:429]}: a 429 {@code rate_limit_error} with {@code retry-after: 5};
 *   <li>{@code [mock:529]}: a 529 {@code overloaded_error}.
 * </ul>
 */
public final class AnthropicMock extends HttpServlet {

    private static final long serialVersionUID = 1L;
    /** Content blocks counted as the gateway counts them, with the mock's text count, 1,000 an image and 3 a tool result. */
    private static final AnthropicTokens.Contents CONTENTS =
            new AnthropicTokens.Contents(AnthropicMock::text, 1_000, 3);

    private final AtomicLong ids = new AtomicLong();

    /** The mock's input tokens of a request: the stand-in for Claude's count. */
    public static long inputTokens(JsonNode body) {
        long tokens = 3;
        JsonNode system = body.get("system");
        if (system != null) {
            tokens += 3 + CONTENTS.of(system);
        }
        for (JsonNode message : body.path("messages")) {
            tokens += 3 + CONTENTS.of(message.get("content"));
        }
        JsonNode tools = body.get("tools");
        if (tools != null && tools.isArray() && !tools.isEmpty()) {
            tokens += 300 + text(tools.toString());
        }
        return tokens;
    }

    /** Two tokens per seven characters, rounded up. */
    public static long text(String text) {
        return (text.codePointCount(0, text.length()) * 2L + 6) / 7;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!request.getMethod().equals("POST")) {
            Anthropic.error(response, 405, "The mock model answers POST /v1/messages.");
            return;
        }
        JsonNode body;
        try {
            body = OpenAi.JSON.readTree(request.getInputStream());
        } catch (JacksonException e) {
            Anthropic.error(response, 400, "Not JSON.");
            return;
        }
        String lastUser = lastUser(body);
        String said = lastUser == null ? "" : lastUser;
        if (said.contains("[mock:429]")) {
            response.setHeader("retry-after", "5");
            Anthropic.error(response, 429, "The mock model's rate limit, on demand.");
            return;
        }
        if (said.contains("[mock:529]")) {
            Anthropic.error(response, 529, "The mock model is overloaded, on demand.");
            return;
        }
        String model = body.path("model").asText("claude-mock");
        String whole = MockModel.reply(lastUser);
        String reply = MockModel.cut(whole, body.path("max_tokens").asLong(Long.MAX_VALUE), AnthropicMock::text);
        String stop = reply.equals(whole) ? "end_turn" : "max_tokens";
        long input = inputTokens(body);
        long output = text(reply);
        String id = "msg_mock_" + ids.incrementAndGet();
        if (!body.path("stream").asBoolean(false)) {
            ObjectNode answer = message(id, model);
            answer.putArray("content").addObject().put("type", "text").put("text", reply);
            answer.put("stop_reason", stop).putNull("stop_sequence");
            usage(answer.putObject("usage"), input, output);
            OpenAi.json(response, 200, answer);
            return;
        }
        stream(response, id, model, reply, input, output, said, stop);
    }

    private static void stream(
            HttpServletResponse response,
            String id,
            String model,
            String reply,
            long input,
            long output,
            String said,
            String stop)
            throws IOException {
        boolean slow = said.contains("[mock:slow]");
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        ServletOutputStream out = response.getOutputStream();
        ObjectNode start = OpenAi.JSON.createObjectNode().put("type", "message_start");
        ObjectNode message = message(id, model);
        message.putArray("content");
        message.putNull("stop_reason").putNull("stop_sequence");
        usage(message.putObject("usage"), input, 1);
        start.set("message", message);
        event(out, "message_start", start, slow);
        ObjectNode blockStart = OpenAi.JSON
                .createObjectNode()
                .put("type", "content_block_start")
                .put("index", 0);
        blockStart.putObject("content_block").put("type", "text").put("text", "");
        event(out, "content_block_start", blockStart, slow);
        event(out, "ping", OpenAi.JSON.createObjectNode().put("type", "ping"), slow);
        String[] words = reply.split(" ");
        for (int i = 0; i < words.length; i++) {
            if (i == 2 && said.contains("[mock:error]")) {
                event(out, "error", Anthropic.errorBody("overloaded_error", "Overloaded, on demand."), slow);
                return;
            }
            if (i == 2 && said.contains("[mock:break]")) {
                throw new IllegalStateException("the mock model breaks the stream off, on demand");
            }
            ObjectNode delta = OpenAi.JSON
                    .createObjectNode()
                    .put("type", "content_block_delta")
                    .put("index", 0);
            delta.putObject("delta").put("type", "text_delta").put("text", i == 0 ? words[i] : " " + words[i]);
            event(out, "content_block_delta", delta, slow);
        }
        event(
                out,
                "content_block_stop",
                OpenAi.JSON.createObjectNode().put("type", "content_block_stop").put("index", 0),
                slow);
        ObjectNode end = OpenAi.JSON.createObjectNode().put("type", "message_delta");
        end.putObject("delta").put("stop_reason", stop).putNull("stop_sequence");
        end.putObject("usage").put("output_tokens", output);
        event(out, "message_delta", end, slow);
        event(out, "message_stop", OpenAi.JSON.createObjectNode().put("type", "message_stop"), slow);
    }

    private static @Nullable String lastUser(JsonNode body) {
        String last = null;
        for (JsonNode message : body.path("messages")) {
            if (!message.path("role").asText().equals("user")) {
                continue;
            }
            JsonNode content = message.path("content");
            if (content.isTextual()) {
                last = content.textValue();
            } else {
                StringBuilder text = new StringBuilder();
                for (JsonNode block : content) {
                    if (block.path("type").asText().equals("text")) {
                        text.append(block.path("text").asText(""));
                    }
                }
                last = text.toString();
            }
        }
        return last;
    }

    private static ObjectNode message(String id, String model) {
        return OpenAi.JSON
                .createObjectNode()
                .put("id", id)
                .put("type", "message")
                .put("role", "assistant")
                .put("model", model);
    }

    private static void usage(ObjectNode usage, long input, long output) {
        usage.put("input_tokens", input)
                .put("cache_creation_input_tokens", 0)
                .put("cache_read_input_tokens", 0)
                .put("output_tokens", output);
    }

    private static void event(ServletOutputStream out, String name, ObjectNode data, boolean slow) throws IOException {
        if (slow) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        out.write(("event: " + name + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
