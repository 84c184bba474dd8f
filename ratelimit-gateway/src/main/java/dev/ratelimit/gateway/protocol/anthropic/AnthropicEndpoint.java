package dev.ratelimit.gateway.protocol.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.gateway.web.MeteredServlet;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Anthropic's Messages API, {@code POST /v1/messages} (plain and streamed), metered like chat
 * completions by {@link MeteredServlet}: validated by {@link AnthropicRequests}, estimated as
 * {@link AnthropicTokens}' count of the prompt plus {@code max_tokens}, routed by model to an
 * Anthropic upstream, forwarded with {@code anthropic-version} and {@code anthropic-beta}, and
 * answered in Anthropic's shape with its {@code anthropic-ratelimit-*} headers. {@code POST
 * /v1/messages/count_tokens} is answered by the gateway itself ({@link #answersItself}).
 *
 * <table>
 *   <caption>How each ending settles</caption>
 *   <tr><th>ending</th><th>settlement</th></tr>
 *   <tr><td>upstream 2xx, plain</td><td>commit {@code usage}: input, cache writes and reads, output</td></tr>
 *   <tr><td>{@code message_stop}</td><td>commit {@code message_start}'s input and the last {@code message_delta}'s output</td></tr>
 *   <tr><td>{@code error} event</td><td>commit the input and what was produced; cancel if nothing was</td></tr>
 *   <tr><td>client disconnects</td><td>commit the input and what was produced</td></tr>
 *   <tr><td>stream breaks off</td><td>commit the input and what was produced; cancel if nothing was</td></tr>
 *   <tr><td>upstream 429, 529, 4xx, 5xx, timeout</td><td>cancel (429 and 529 passed on, with their retry time)</td></tr>
 * </table>
 */
public final class AnthropicEndpoint implements Endpoint {

    private final AnthropicTokens tokens;

    public AnthropicEndpoint(AnthropicTokens tokens) {
        this.tokens = tokens;
    }

    @Override
    public String metric() {
        return "messages";
    }

    @Override
    public String upstreamPath() {
        return "/messages";
    }

    @Override
    public Protocol protocol() {
        return Protocol.ANTHROPIC;
    }

    @Override
    public String tooLargeAdvice() {
        return "lower max_tokens or shorten the messages";
    }

    @Override
    public Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter counter) throws BadRequest {
        AnthropicRequests.Messages messages = AnthropicRequests.messages(body, true);
        long prompt = tokens.prompt(body);
        return new Call(
                messages.model(), messages.body(), prompt, prompt + messages.maxTokens(), messages.stream(), true);
    }

    /** The client's {@code anthropic-version} (the API requires one: a default when it sent none) and {@code anthropic-beta}. */
    @Override
    public Map<String, String> upstreamHeaders(HttpServletRequest request) {
        Map<String, String> headers = new LinkedHashMap<>();
        String version = request.getHeader("anthropic-version");
        headers.put("anthropic-version", version == null || version.isBlank() ? Anthropic.DEFAULT_VERSION : version);
        String beta = request.getHeader("anthropic-beta");
        if (beta != null && !beta.isBlank()) {
            headers.put("anthropic-beta", beta);
        }
        return headers;
    }

    /** The answer's {@code usage}, or failing that the prompt estimate and the answer's counted content. */
    @Override
    public TokenUsage plainUsage(JsonNode answer, Call call, TokenCounter counter) {
        JsonNode usage = answer.get("usage");
        if (usage != null && usage.isObject()) {
            return AnthropicEvents.usageOf(
                    usage, Math.max(0, usage.path("output_tokens").asLong(0)));
        }
        return TokenUsage.of(call.promptTokens(), tokens.content(answer.get("content")));
    }

    /**
     * {@code POST /v1/messages/count_tokens}: the gateway's own estimate of the prompt, the figure it
     * would reserve, as {@code {"input_tokens":N}}; no upstream call, nothing charged.
     */
    @Override
    public boolean answersItself(HttpServletRequest request, HttpServletResponse response, ObjectNode body)
            throws BadRequest, IOException {
        if (!Anthropic.COUNT_TOKENS.equals(request.getRequestURI())) {
            return false;
        }
        AnthropicRequests.messages(body, false);
        OpenAi.json(response, 200, OpenAi.JSON.createObjectNode().put("input_tokens", tokens.prompt(body)));
        return true;
    }

    @Override
    public SseRelay.Events events(Call call, TokenCounter counter) {
        return new AnthropicEvents(TokenCounts.claude().stream());
    }
}
