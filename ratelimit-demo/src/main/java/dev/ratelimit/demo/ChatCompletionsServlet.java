package dev.ratelimit.demo;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * {@code POST /v1/chat/completions} from a built-in mock model: a short deterministic reply to the
 * last user message, with {@code usage} counted in whitespace-separated words.
 */
final class ChatCompletionsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    static final String DEFAULT_MODEL = "ratelimit-demo-mock";
    private static final int MAX_BODY_BYTES = 64 * 1024;
    private static final int MAX_ECHO_CHARS = 60;

    private final transient Clock clock;
    private final AtomicLong ids = new AtomicLong();

    ChatCompletionsServlet(Clock clock) {
        this.clock = clock;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!request.getMethod().equals("POST")) {
            response.setHeader("Allow", "POST");
            Responses.error(response, 405, "invalid_request_error", null, "Use POST for /v1/chat/completions.");
            return;
        }
        doPost(request, response);
    }

    @Override
    protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String body = readBody(request);
        if (body == null) {
            invalid(response, "The request body must be UTF-8 JSON of at most " + MAX_BODY_BYTES + " bytes.");
            return;
        }
        Object parsed;
        try {
            parsed = Json.parse(body);
        } catch (Json.ParseException e) {
            invalid(response, "We could not parse the JSON body of your request: " + e.getMessage() + ".");
            return;
        }
        if (!(parsed instanceof Map<?, ?> root)) {
            invalid(response, "The request body must be a JSON object.");
            return;
        }
        Object model = root.containsKey("model") ? root.get("model") : DEFAULT_MODEL;
        if (!(model instanceof String modelName) || modelName.isBlank()) {
            invalid(response, "'model' must be a non-empty string.");
            return;
        }
        if (Boolean.TRUE.equals(root.get("stream"))) {
            invalid(response, "'stream' is not supported by the demo's mock model.");
            return;
        }
        if (!(root.get("messages") instanceof List<?> messages) || messages.isEmpty()) {
            invalid(response, "'messages' must be a non-empty array of {\"role\", \"content\"} objects.");
            return;
        }
        int promptTokens = 0;
        String lastUser = null;
        for (int i = 0; i < messages.size(); i++) {
            if (!(messages.get(i) instanceof Map<?, ?> message)
                    || !(message.get("role") instanceof String role)
                    || !(message.get("content") instanceof String content)) {
                invalid(response, "'messages[" + i + "]' must be an object with string 'role' and 'content'.");
                return;
            }
            promptTokens += words(content);
            if (role.equals("user")) {
                lastUser = content;
            }
        }
        String reply = reply(lastUser);
        int completionTokens = words(reply);

        Map<String, Object> message = new LinkedHashMap<>();
        message.put("role", "assistant");
        message.put("content", reply);
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        choice.put("message", message);
        choice.put("finish_reason", "stop");
        Map<String, Object> usage = new LinkedHashMap<>();
        usage.put("prompt_tokens", promptTokens);
        usage.put("completion_tokens", completionTokens);
        usage.put("total_tokens", promptTokens + completionTokens);
        Map<String, Object> completion = new LinkedHashMap<>();
        completion.put("id", "chatcmpl-demo-" + ids.incrementAndGet());
        completion.put("object", "chat.completion");
        completion.put("created", clock.instant().getEpochSecond());
        completion.put("model", modelName);
        completion.put("choices", List.of(choice));
        completion.put("usage", usage);
        Responses.json(response, 200, completion);
    }

    static String reply(@Nullable String lastUser) {
        if (lastUser == null || lastUser.isBlank()) {
            return "Hello from the ratelimit demo's mock model.";
        }
        String said = lastUser.strip().replaceAll("\\s+", " ");
        if (said.length() > MAX_ECHO_CHARS) {
            said = said.substring(0, MAX_ECHO_CHARS) + "...";
        }
        return "Mock reply from the ratelimit demo. You said: \"" + said + "\"";
    }

    static int words(String text) {
        String stripped = text.strip();
        return stripped.isEmpty() ? 0 : stripped.split("\\s+").length;
    }

    private static @Nullable String readBody(HttpServletRequest request) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        try (InputStream in = request.getInputStream()) {
            int read;
            while ((read = in.read(buffer)) != -1) {
                if (bytes.size() + read > MAX_BODY_BYTES) {
                    return null;
                }
                bytes.write(buffer, 0, read);
            }
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static void invalid(HttpServletResponse response, String message) throws IOException {
        Responses.error(response, 400, "invalid_request_error", null, message);
    }
}
