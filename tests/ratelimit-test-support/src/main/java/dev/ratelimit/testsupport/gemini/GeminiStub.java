package dev.ratelimit.testsupport.gemini;

import com.sun.net.httpserver.HttpExchange;
import dev.ratelimit.testsupport.ModelStub;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;

/**
 * A Gemini API upstream answering {@code POST /v1beta/models/{model}:generateContent} and {@code
 * :streamGenerateContent?alt=sse} (server-sent events, one {@code GenerateContentResponse} a chunk), that
 * counts the calls reaching it. Every answer is {@link #REPLY} and reports {@link #PROMPT_TOKENS}
 * prompt and {@link #CANDIDATES_TOKENS} candidates' tokens, plus the cached and thinking tokens the test
 * sets; a stream reports the prompt alone on its earlier chunks and the whole usage on its last, as
 * Gemini does.
 */
public final class GeminiStub extends ModelStub {

    /** The answer's text. */
    public static final String REPLY = "Hello from the stub";

    /** The answer's text as the stream sends it, one part per chunk. */
    public static final String[] STREAMED_PARTS = {"Hello", " from", " the", " stub"};

    /** The prompt tokens every answer reports ({@code promptTokenCount}, cached ones included). */
    public static final int PROMPT_TOKENS = 11;

    /** The candidates' tokens every answer reports ({@code candidatesTokenCount}, thoughts excluded). */
    public static final int CANDIDATES_TOKENS = 7;

    private volatile int cachedTokens;
    private volatile int thoughtsTokens;

    /**
     * Starts the stub on a free port of the loopback address.
     *
     * @throws IOException if the server cannot bind
     */
    public GeminiStub() throws IOException {
        super();
    }

    /**
     * Starts a stub, for a field initializer ({@code @RegisterExtension final GeminiStub gemini =
     * GeminiStub.start();}).
     *
     * @return the started stub
     * @throws UncheckedIOException if the server cannot bind
     */
    public static GeminiStub start() {
        try {
            return new GeminiStub();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Returns the base URL with the API version, as Google's is {@code
     * https://generativelanguage.googleapis.com/v1beta}.
     *
     * @return the base URL
     */
    public String baseUrl() {
        return rootUrl() + "/v1beta";
    }

    /**
     * Makes later answers report this many of their {@link #PROMPT_TOKENS} as read from the context
     * cache ({@code cachedContentTokenCount}, inside the prompt count as Gemini reports it).
     *
     * @param cachedTokens the cached prompt tokens, at most {@link #PROMPT_TOKENS}
     */
    public void reportCachedTokens(int cachedTokens) {
        this.cachedTokens = cachedTokens;
    }

    /**
     * Makes later answers report this many thinking tokens ({@code thoughtsTokenCount}, in the total
     * but not in the candidates' count).
     *
     * @param thoughtsTokens the thinking tokens
     */
    public void reportThoughtsTokens(int thoughtsTokens) {
        this.thoughtsTokens = thoughtsTokens;
    }

    /**
     * Returns the total every answer reports now: prompt, candidates' and thinking tokens.
     *
     * @return the {@code totalTokenCount}
     */
    public int totalTokens() {
        return PROMPT_TOKENS + CANDIDATES_TOKENS + thoughtsTokens;
    }

    @Override
    protected String errorBody(int status) {
        return "{\"error\":{\"code\":" + status + ",\"message\":\"stub failure\",\"status\":\"INVALID_ARGUMENT\"}}";
    }

    @Override
    protected void answer(HttpExchange exchange, String body) throws IOException {
        if (!exchange.getRequestURI().getPath().endsWith(":streamGenerateContent")) {
            send(exchange, 200, "application/json", response(REPLY, "STOP", usage(true)));
            return;
        }
        OutputStream out = startEvents(exchange);
        for (int i = 0; i < STREAMED_PARTS.length; i++) {
            boolean last = i == STREAMED_PARTS.length - 1;
            event(out, response(STREAMED_PARTS[i], last ? "STOP" : null, usage(last)));
        }
    }

    private String usage(boolean whole) {
        if (!whole) {
            return "{\"promptTokenCount\":" + PROMPT_TOKENS + ",\"totalTokenCount\":" + PROMPT_TOKENS + "}";
        }
        int cached = cachedTokens;
        int thoughts = thoughtsTokens;
        return "{\"promptTokenCount\":" + PROMPT_TOKENS + ",\"candidatesTokenCount\":" + CANDIDATES_TOKENS
                + (cached > 0 ? ",\"cachedContentTokenCount\":" + cached : "")
                + (thoughts > 0 ? ",\"thoughtsTokenCount\":" + thoughts : "")
                + ",\"totalTokenCount\":" + (PROMPT_TOKENS + CANDIDATES_TOKENS + thoughts) + "}";
    }

    private static String response(String text, @Nullable String finishReason, String usage) {
        String finish = finishReason == null ? "" : ",\"finishReason\":\"" + finishReason + "\"";
        return "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"" + text + "\"}],\"role\":\"model\"}" + finish
                + ",\"index\":0}],\"usageMetadata\":" + usage + ",\"modelVersion\":\"stub\"}";
    }
}
