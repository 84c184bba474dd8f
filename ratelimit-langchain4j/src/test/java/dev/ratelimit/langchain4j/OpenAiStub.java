package dev.ratelimit.langchain4j;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * An OpenAI-compatible upstream on Jetty 12 answering {@code POST /v1/chat/completions}, plain and
 * streamed (server-sent events, with a final usage chunk when the client asks for it), that counts the
 * calls reaching it. A request offering tools whose history holds no tool result gets a call of the
 * first tool; otherwise the answer is {@link #REPLY}.
 */
final class OpenAiStub implements AutoCloseable {

    static final String REPLY = "Hello from the stub";
    static final int PROMPT_TOKENS = 11;
    static final int COMPLETION_TOKENS = 7;
    static final int TOTAL_TOKENS = PROMPT_TOKENS + COMPLETION_TOKENS;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Server server = new Server();
    private final ServerConnector connector = new ServerConnector(server);
    private final AtomicInteger calls = new AtomicInteger();
    private volatile int status = 200;
    private volatile boolean reportUsage = true;
    private volatile int cachedTokens;
    private volatile CountDownLatch holdAfterFirstChunk = new CountDownLatch(0);
    private volatile boolean breakAfterFirstChunk;

    OpenAiStub() throws Exception {
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                answer(request, response, callback);
                return true;
            }
        });
        server.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + connector.getLocalPort() + "/v1";
    }

    int calls() {
        return calls.get();
    }

    void failWith(int status) {
        this.status = status;
    }

    void reportUsage(boolean reportUsage) {
        this.reportUsage = reportUsage;
    }

    /** Answers report this many of their prompt tokens as cached ({@code prompt_tokens_details.cached_tokens}). */
    void reportCachedTokens(int cachedTokens) {
        this.cachedTokens = cachedTokens;
    }

    /** Streams break off (the connection is aborted) after their first content chunk. */
    void breakStreamsAfterFirstChunk() {
        breakAfterFirstChunk = true;
    }

    /** Streams stop after their first content chunk until {@link CountDownLatch#countDown()}. */
    CountDownLatch holdStreamsAfterFirstChunk() {
        CountDownLatch latch = new CountDownLatch(1);
        holdAfterFirstChunk = latch;
        return latch;
    }

    private void answer(Request request, Response response, Callback callback) throws Exception {
        JsonNode body = JSON.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
        calls.incrementAndGet();
        if (status != 200) {
            response.setStatus(status);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            Content.Sink.write(
                    response, true, "{\"error\":{\"message\":\"stub failure\",\"type\":\"server_error\"}}", callback);
            return;
        }
        String model = body.path("model").asText("gpt-4o-mini");
        String tool = toolToCall(body);
        if (body.path("stream").asBoolean(false)) {
            stream(
                    model,
                    tool,
                    body.path("stream_options").path("include_usage").asBoolean(false),
                    response);
            callback.succeeded();
            return;
        }
        ObjectNode message = JSON.createObjectNode().put("role", "assistant");
        if (tool == null) {
            message.put("content", REPLY);
        } else {
            message.putNull("content");
            message.set("tool_calls", toolCalls(tool, true));
        }
        ObjectNode choice =
                JSON.createObjectNode().put("index", 0).put("finish_reason", tool == null ? "stop" : "tool_calls");
        choice.set("message", message);
        ObjectNode completion = completion(model, "chat.completion");
        completion.putArray("choices").add(choice);
        if (reportUsage) {
            completion.set("usage", usage());
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        Content.Sink.write(response, true, JSON.writeValueAsString(completion), callback);
    }

    private void stream(String model, String tool, boolean includeUsage, Response response) throws Exception {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        try (OutputStream out = Content.Sink.asOutputStream(response)) {
            if (tool != null) {
                ObjectNode delta = JSON.createObjectNode().put("role", "assistant");
                delta.set("tool_calls", toolCalls(tool, false));
                event(out, chunk(model, delta, null));
                event(out, chunk(model, JSON.createObjectNode(), "tool_calls"));
            } else {
                String[] parts = {"Hello", " from", " the", " stub"};
                for (int i = 0; i < parts.length; i++) {
                    ObjectNode delta = JSON.createObjectNode().put("content", parts[i]);
                    if (i == 0) {
                        delta.put("role", "assistant");
                    }
                    event(out, chunk(model, delta, null));
                    if (i == 0 && breakAfterFirstChunk) {
                        throw new IllegalStateException("the stub breaks the stream off");
                    }
                    if (i == 0 && !holdAfterFirstChunk.await(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the test never released the stream");
                    }
                }
                event(out, chunk(model, JSON.createObjectNode(), "stop"));
            }
            if (includeUsage && reportUsage) {
                ObjectNode last = completion(model, "chat.completion.chunk");
                last.putArray("choices");
                last.set("usage", usage());
                event(out, JSON.writeValueAsString(last));
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void event(OutputStream out, String data) throws Exception {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static String chunk(String model, ObjectNode delta, String finishReason) throws Exception {
        ObjectNode choice = JSON.createObjectNode().put("index", 0);
        choice.set("delta", delta);
        if (finishReason == null) {
            choice.putNull("finish_reason");
        } else {
            choice.put("finish_reason", finishReason);
        }
        ObjectNode chunk = completion(model, "chat.completion.chunk");
        chunk.putArray("choices").add(choice);
        return JSON.writeValueAsString(chunk);
    }

    private static ObjectNode completion(String model, String object) {
        return JSON.createObjectNode()
                .put("id", "chatcmpl-stub")
                .put("object", object)
                .put("created", 1_700_000_000L)
                .put("model", model);
    }

    private static ArrayNode toolCalls(String tool, boolean plain) {
        ObjectNode call = JSON.createObjectNode().put("id", "call_1").put("type", "function");
        if (!plain) {
            call.put("index", 0);
        }
        call.putObject("function").put("name", tool).put("arguments", "{}");
        return JSON.createArrayNode().add(call);
    }

    private ObjectNode usage() {
        ObjectNode usage = JSON.createObjectNode()
                .put("prompt_tokens", PROMPT_TOKENS)
                .put("completion_tokens", COMPLETION_TOKENS)
                .put("total_tokens", TOTAL_TOKENS);
        if (cachedTokens > 0) {
            usage.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
        }
        return usage;
    }

    /** The first tool offered, when the history has no tool result yet: the model asks for it. */
    private static String toolToCall(JsonNode body) {
        JsonNode tools = body.path("tools");
        if (!tools.isArray() || tools.isEmpty()) {
            return null;
        }
        for (JsonNode message : body.path("messages")) {
            if ("tool".equals(message.path("role").asText())) {
                return null;
            }
        }
        return tools.get(0).path("function").path("name").asText();
    }

    @Override
    public void close() throws Exception {
        holdAfterFirstChunk.countDown();
        server.stop();
    }
}
