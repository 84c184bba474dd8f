package dev.ratelimit.testsupport.openai;

import com.sun.net.httpserver.HttpExchange;
import dev.ratelimit.testsupport.ModelStub;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An OpenAI-compatible upstream answering {@code POST /v1/chat/completions}, plain and streamed
 * (server-sent events, ending with a usage chunk when the client sends {@code
 * stream_options.include_usage}), that counts the calls reaching it. A request that offers tools and
 * whose history holds no tool result gets a call of the first tool offered (with arguments {@code
 * {}}); otherwise the answer is {@link #REPLY}, streamed as {@link #STREAMED_PARTS}. Each call is
 * served on its own thread, so concurrent calls overlap.
 */
public final class OpenAiStub extends ModelStub {

    /** The answer's text. */
    public static final String REPLY = "Hello from the stub";

    /** The answer's text as the stream sends it, one part per chunk. */
    public static final String[] STREAMED_PARTS = {"Hello", " from", " the", " stub"};

    /** The prompt tokens every answer reports. */
    public static final int PROMPT_TOKENS = 11;

    /** The completion tokens every answer reports. */
    public static final int COMPLETION_TOKENS = 7;

    /** The total tokens every answer reports. */
    public static final int TOTAL_TOKENS = PROMPT_TOKENS + COMPLETION_TOKENS;

    private static final Pattern STREAM = Pattern.compile("\"stream\"\\s*:\\s*true");
    private static final Pattern INCLUDE_USAGE = Pattern.compile("\"include_usage\"\\s*:\\s*true");
    private static final Pattern MODEL = Pattern.compile("\"model\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern TOOL_RESULT = Pattern.compile("\"role\"\\s*:\\s*\"tool\"");
    private static final Pattern TOOLS = Pattern.compile("\"tools\"\\s*:\\s*\\[");
    private static final Pattern NAME = Pattern.compile("\"name\"\\s*:\\s*\"([^\"]+)\"");

    private volatile boolean reportUsage = true;
    private volatile int cachedTokens;
    private volatile CountDownLatch holdAfterFirstChunk = new CountDownLatch(0);

    /**
     * Starts the stub on a free port of the loopback address.
     *
     * @throws IOException if the server cannot bind
     */
    public OpenAiStub() throws IOException {
        super();
    }

    /**
     * Returns the base URL to give a client: {@code http://127.0.0.1:<port>/v1}.
     *
     * @return the base URL
     */
    public String baseUrl() {
        return rootUrl() + "/v1";
    }

    /**
     * Sets whether answers carry {@code usage} (plain) or a usage chunk (streams that ask for it).
     *
     * @param reportUsage whether to report usage
     */
    public void reportUsage(boolean reportUsage) {
        this.reportUsage = reportUsage;
    }

    /**
     * Makes later answers report this many of their {@link #PROMPT_TOKENS} as read from the prompt
     * cache ({@code prompt_tokens_details.cached_tokens}, as OpenAI reports them: inside the prompt
     * count); 0, the default, reports no details.
     *
     * @param cachedTokens the cached part of the prompt
     */
    public void reportCachedTokens(int cachedTokens) {
        this.cachedTokens = cachedTokens;
    }

    /**
     * Makes streams stop after their first content chunk until the latch is counted down (or the
     * stub closes).
     *
     * @return the latch that releases held streams
     */
    public CountDownLatch holdStreamsAfterFirstChunk() {
        CountDownLatch latch = new CountDownLatch(1);
        holdAfterFirstChunk = latch;
        return latch;
    }

    @Override
    protected String errorBody(int status) {
        return "{\"error\":{\"message\":\"stub failure\",\"type\":\"server_error\",\"param\":null,\"code\":null}}";
    }

    @Override
    protected void answer(HttpExchange exchange, String body) throws IOException {
        Matcher model = MODEL.matcher(body);
        String modelName = model.find() ? model.group(1) : "gpt-4o-mini";
        String tool = toolToCall(body);
        if (STREAM.matcher(body).find()) {
            stream(exchange, modelName, tool, INCLUDE_USAGE.matcher(body).find());
            return;
        }
        String message = tool == null
                ? "{\"role\":\"assistant\",\"content\":\"" + REPLY + "\"}"
                : "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":" + toolCalls(tool, false) + "}";
        String completion = completion(
                modelName,
                "chat.completion",
                "[{\"index\":0,\"finish_reason\":\"" + (tool == null ? "stop" : "tool_calls") + "\",\"message\":"
                        + message + "}]");
        send(exchange, 200, "application/json", completion);
    }

    private void stream(HttpExchange exchange, String model, @Nullable String tool, boolean includeUsage)
            throws IOException {
        OutputStream out = startEvents(exchange);
        if (tool != null) {
            event(out, chunk(model, "{\"role\":\"assistant\",\"tool_calls\":" + toolCalls(tool, true) + "}", null));
            event(out, chunk(model, "{}", "tool_calls"));
        } else {
            for (int i = 0; i < STREAMED_PARTS.length; i++) {
                String role = i == 0 ? "\"role\":\"assistant\"," : "";
                event(out, chunk(model, "{" + role + "\"content\":\"" + STREAMED_PARTS[i] + "\"}", null));
                if (i == 0) {
                    await(holdAfterFirstChunk);
                }
            }
            event(out, chunk(model, "{}", "stop"));
        }
        if (includeUsage && reportUsage) {
            event(out, completion(model, "chat.completion.chunk", "[]"));
        }
        out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void await(CountDownLatch latch) throws IOException {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IOException("the test never released the stream");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while holding the stream", e);
        }
    }

    private String chunk(String model, String delta, @Nullable String finishReason) {
        String reason = finishReason == null ? "null" : "\"" + finishReason + "\"";
        return completion(
                model,
                "chat.completion.chunk",
                "[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":" + reason + "}]",
                false);
    }

    private String completion(String model, String object, String choices) {
        return completion(model, object, choices, reportUsage);
    }

    private String completion(String model, String object, String choices, boolean withUsage) {
        int cached = cachedTokens;
        String details = cached > 0 ? ",\"prompt_tokens_details\":{\"cached_tokens\":" + cached + "}" : "";
        String usage = withUsage
                ? ",\"usage\":{\"prompt_tokens\":" + PROMPT_TOKENS + ",\"completion_tokens\":" + COMPLETION_TOKENS
                        + ",\"total_tokens\":" + TOTAL_TOKENS + details + "}"
                : "";
        return "{\"id\":\"chatcmpl-stub\",\"object\":\"" + object + "\",\"created\":1700000000,\"model\":\"" + model
                + "\",\"choices\":" + choices + usage + "}";
    }

    private static String toolCalls(String tool, boolean streamed) {
        String index = streamed ? "\"index\":0," : "";
        return "[{" + index + "\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"" + tool
                + "\",\"arguments\":\"{}\"}}]";
    }

    /** The first tool offered, when the history has no tool result yet: the model asks for it. */
    private static @Nullable String toolToCall(String body) {
        Matcher tools = TOOLS.matcher(body);
        if (!tools.find() || TOOL_RESULT.matcher(body).find()) {
            return null;
        }
        Matcher name = NAME.matcher(body);
        return name.find(tools.end()) ? name.group(1) : null;
    }

    @Override
    public void close() {
        holdAfterFirstChunk.countDown();
        super.close();
    }
}
