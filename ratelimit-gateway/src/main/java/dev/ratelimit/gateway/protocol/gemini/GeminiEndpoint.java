package dev.ratelimit.gateway.protocol.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.JsonArrayRelay;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.gateway.protocol.StreamFraming;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.gateway.web.MeteredServlet;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Google's Gemini API, {@code POST /v1beta/models/{model}:generateContent} and {@code
 * :streamGenerateContent} (server-sent events with {@code alt=sse}, else a streamed JSON array),
 * metered like chat completions by {@link MeteredServlet}: validated by {@link GeminiRequests},
 * estimated as {@link GeminiTokens}' count of the prompt plus {@code candidateCount} × {@code
 * generationConfig.maxOutputTokens} (else {@code limits.gemini-default-max-output-tokens}), routed by
 * the path's model to a Gemini upstream ({@code x-goog-api-key}, the client's {@code key} never
 * relayed), settled to {@code usageMetadata} by kind ({@link GeminiEvents#usageOf}), and answered in
 * Google's error shape. {@code :countTokens} is answered by the gateway itself ({@link
 * #answersItself}).
 *
 * <table>
 *   <caption>How each ending settles</caption>
 *   <tr><th>ending</th><th>settlement</th></tr>
 *   <tr><td>upstream 2xx, plain</td><td>commit {@code usageMetadata}: input, cached input, output and thoughts</td></tr>
 *   <tr><td>stream finished (a {@code finishReason}; the array closed)</td><td>commit the last chunk's {@code usageMetadata}</td></tr>
 *   <tr><td>{@code error} chunk</td><td>commit the input and what was produced; cancel if nothing was</td></tr>
 *   <tr><td>client disconnects</td><td>commit the input and what was produced</td></tr>
 *   <tr><td>stream breaks off</td><td>commit the input and what was produced; cancel if nothing was</td></tr>
 *   <tr><td>upstream 429, 4xx, 5xx, timeout</td><td>cancel (a 429's {@code RetryInfo} starts the model's cooldown)</td></tr>
 * </table>
 */
public final class GeminiEndpoint implements Endpoint {

    private final GeminiTokens tokens;

    public GeminiEndpoint(GeminiTokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public String metric() {
        return "generate_content";
    }

    @Override
    public String upstreamPath() {
        return "/models/{model}:generateContent";
    }

    /** {@code /models/{model}:generateContent}, or {@code :streamGenerateContent} with the client's {@code alt=sse}. */
    @Override
    public String upstreamPath(HttpServletRequest request, Call call) {
        String method = call.stream() ? Gemini.STREAM : Gemini.GENERATE;
        return "/models/" + call.model() + ":" + method + (call.stream() && sse(request) ? "?alt=sse" : "");
    }

    @Override
    public Protocol protocol() {
        return Protocol.GEMINI;
    }

    @Override
    public String tooLargeAdvice() {
        return "lower generationConfig.maxOutputTokens (or candidateCount) or shorten the contents";
    }

    /** Never called: a Gemini body does not name its model, its path does (the method below). */
    @Override
    public Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter counter) {
        throw new IllegalStateException("a Gemini request's model is in its path");
    }

    @Override
    public Call parse(HttpServletRequest request, ObjectNode body, GatewayConfig.Limits limits, TokenCounter counter)
            throws BadRequest {
        Gemini.ModelCall called = modelCall(request);
        GeminiRequests.Generate generate = GeminiRequests.generate(body, limits.geminiDefaultMaxOutputTokens());
        long prompt = tokens.prompt(body);
        long output = generate.candidates() * generate.maxOutputTokens();
        return new Call(
                called.model(),
                body,
                prompt,
                output > Long.MAX_VALUE - prompt ? Long.MAX_VALUE : prompt + output,
                called.method().equals(Gemini.STREAM),
                true);
    }

    /**
     * {@code POST /v1beta/models/{model}:countTokens}: the gateway's own estimate of the prompt, the
     * figure it would reserve, as {@code {"totalTokens":N}}; no upstream call, nothing charged.
     */
    @Override
    public boolean answersItself(HttpServletRequest request, HttpServletResponse response, ObjectNode body)
            throws BadRequest, IOException {
        if (!modelCall(request).method().equals(Gemini.COUNT_TOKENS)) {
            return false;
        }
        GeminiRequests.countTokens(body);
        OpenAi.json(response, 200, OpenAi.JSON.createObjectNode().put("totalTokens", tokens.prompt(body)));
        return true;
    }

    /** The answer's {@code usageMetadata}, or failing that the prompt estimate and the candidates' counted text. */
    @Override
    public TokenUsage plainUsage(JsonNode answer, Call call, TokenCounter counter) {
        TokenUsage usage = GeminiEvents.usageOf(answer.get("usageMetadata"));
        return usage != null ? usage : TokenUsage.of(call.promptTokens(), tokens.candidates(answer));
    }

    @Override
    public SseRelay.Events events(Call call, TokenCounter counter) {
        return new GeminiEvents(TokenCounts.gemini().stream());
    }

    /** Every 2xx answer to {@code streamGenerateContent} is a stream: events, or a JSON array. */
    @Override
    public boolean streamed(Call call, Upstream.Exchange answer) {
        return call.stream();
    }

    @Override
    public StreamFraming framing(Call call, Upstream.Exchange answer, TokenCounter counter) {
        SseRelay.Events events = events(call, counter);
        return answer.isEventStream() ? new SseRelay(events) : new JsonArrayRelay(events, GeminiEvents::errorChunk);
    }

    /** Google's {@code RetryInfo.retryDelay}, which a 429 {@code RESOURCE_EXHAUSTED} carries in its body. */
    @Override
    public @Nullable Duration retryDelay(byte[] refusal) {
        return Gemini.retryDelay(refusal);
    }

    /** The path's model and method; the servlet routes only those {@link Gemini.ModelCall#of} reads here. */
    private static Gemini.ModelCall modelCall(HttpServletRequest request) {
        Gemini.ModelCall called = Gemini.ModelCall.of(request.getPathInfo());
        if (called == null) {
            throw new IllegalStateException("not a Gemini model call: " + request.getRequestURI());
        }
        return called;
    }

    /** Whether the client asked for server-sent events ({@code alt=sse}) rather than a JSON array. */
    private static boolean sse(HttpServletRequest request) {
        String query = request.getQueryString();
        if (query == null) {
            return false;
        }
        for (String pair : query.split("&")) {
            if (pair.equals("alt=sse") || pair.equals("$alt=sse")) {
                return true;
            }
        }
        return false;
    }
}
