package dev.ratelimit.gateway.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicEndpoint;
import dev.ratelimit.gateway.protocol.gemini.GeminiEndpoint;
import dev.ratelimit.gateway.protocol.openai.OpenAiEndpoint;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.gateway.web.MeteredServlet;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One token-metered endpoint as {@link MeteredServlet} drives it: parse and validate a request and
 * estimate its tokens (before anything is charged), then read the tokens used from the upstream's
 * answer, plain ({@link #plainUsage}) or streamed ({@link #events}). The servlet does the rest the
 * same way for every endpoint: route, admit, forward, relay, settle once, and answer in the shape
 * of the endpoint's {@link #protocol()}. Another API plugs in by implementing this interface; {@link
 * OpenAiEndpoint} holds OpenAI's four, {@link AnthropicEndpoint} Anthropic's Messages API, {@link
 * GeminiEndpoint} Google's {@code generateContent} and {@code streamGenerateContent}.
 */
public interface Endpoint {

    /** The endpoint's label in the metrics, such as {@code chat}. */
    String metric();

    /** The path below the upstream's base URL, such as {@code /chat/completions}. */
    String upstreamPath();

    /**
     * The path and query below the upstream's base URL that one call is sent to: {@link
     * #upstreamPath()}, unless the endpoint's path names more (Gemini's names the model and the
     * method).
     */
    default String upstreamPath(HttpServletRequest request, Call call) {
        return upstreamPath();
    }

    /** The API the endpoint speaks: the upstreams it is routed to, its error shape and rate-limit headers. */
    Protocol protocol();

    /**
     * The call's {@code gen_ai.operation.name} in OpenTelemetry's GenAI conventions: {@code chat},
     * {@code text_completion}, {@code embeddings} or {@code generate_content}.
     */
    default String operation() {
        return switch (metric()) {
            case "completions" -> "text_completion";
            case "embeddings" -> "embeddings";
            case "generate_content" -> "generate_content";
            default -> "chat"; // chat completions, responses, messages
        };
    }

    /** The headers forwarded to the upstream besides the gateway's own, such as {@code anthropic-version}. */
    default Map<String, String> upstreamHeaders(HttpServletRequest request) {
        return Map.of();
    }

    /** What a request too large for a token window can change, ending its 400's message. */
    String tooLargeAdvice();

    /**
     * Answers a request the gateway serves itself, charging nothing and never reaching the upstream
     * (Anthropic's {@code count_tokens}), and returns {@code true}; {@code false} for a request to
     * meter, which {@link #parse} reads next.
     *
     * @throws BadRequest for input the API would refuse
     */
    default boolean answersItself(HttpServletRequest request, HttpServletResponse response, ObjectNode body)
            throws BadRequest, IOException {
        return false;
    }

    /**
     * Validates a request body and estimates it.
     *
     * @throws BadRequest for input the upstream would refuse, before any budget is touched
     */
    Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter tokens) throws BadRequest;

    /**
     * Validates a request and estimates it: its body ({@link #parse(ObjectNode, GatewayConfig.Limits,
     * TokenCounter)}), and its path where the path names the model (Gemini's).
     *
     * @throws BadRequest for input the upstream would refuse, before any budget is touched
     */
    default Call parse(HttpServletRequest request, ObjectNode body, GatewayConfig.Limits limits, TokenCounter tokens)
            throws BadRequest {
        return parse(body, limits, tokens);
    }

    /**
     * The tokens a complete plain (not streamed) answer used, by kind: its {@code usage}, or failing
     * that the prompt estimate plus the answer's counted text.
     */
    TokenUsage plainUsage(JsonNode answer, Call call, TokenCounter tokens);

    /** A watcher for one streamed answer of {@code call}, counting what it produced with {@code tokens}. */
    SseRelay.Events events(Call call, TokenCounter tokens);

    /**
     * Whether a 2xx answer to {@code call} is relayed as a stream: by default when the client asked
     * for one and the upstream answers server-sent events.
     */
    default boolean streamed(Call call, Upstream.Exchange answer) {
        return call.stream() && answer.isEventStream();
    }

    /** How a streamed answer's bytes frame its events: server-sent events by default. */
    default StreamFraming framing(Call call, Upstream.Exchange answer, TokenCounter tokens) {
        return new SseRelay(events(call, tokens));
    }

    /**
     * The retry time an upstream's refusal carries in its body, which starts the model's cooldown
     * like a {@code retry-after} header; {@code null} by default (OpenAI and Anthropic send headers).
     */
    default @Nullable Duration retryDelay(byte[] refusal) {
        return null;
    }

    /**
     * One validated request.
     *
     * @param model the model asked for: its upstream cap and its tokenizer
     * @param body the body to forward (the endpoint may have added to it, such as a stream's usage
     *     option)
     * @param promptTokens the counted prompt
     * @param estimate the tokens reserved: the prompt plus the most the answer may take (its worst
     *     case cost: {@code promptTokens} at the input price, the rest at the output price)
     * @param stream whether the client asked for a stream
     * @param clientWantsUsage whether the client itself asked for a stream's usage chunk (chat and
     *     legacy completions); a chunk the gateway asked for alone is not relayed
     * @param rewritten whether the endpoint changed {@code body}: otherwise the bytes the client sent
     *     are forwarded as they came, not written out again
     */
    public record Call(
            String model,
            ObjectNode body,
            long promptTokens,
            long estimate,
            boolean stream,
            boolean clientWantsUsage,
            boolean rewritten) {

        /** A call whose body is forwarded as the client sent it. */
        public Call(
                String model,
                ObjectNode body,
                long promptTokens,
                long estimate,
                boolean stream,
                boolean clientWantsUsage) {
            this(model, body, promptTokens, estimate, stream, clientWantsUsage, false);
        }

        /** The most the answer may take: what the estimate reserves beyond the prompt. */
        public long maxOutputTokens() {
            return Math.max(0, estimate - promptTokens);
        }

        /** The estimate as a usage: the prompt as input, the rest as output; a queued answer's charge. */
        public TokenUsage estimated() {
            return TokenUsage.of(promptTokens, maxOutputTokens());
        }
    }

    /**
     * The tokens an OpenAI {@code usage} object reports, by kind: input ({@code prompt_tokens} in
     * chat, completions and embeddings, {@code input_tokens} in the Responses API) with its cached
     * part ({@code *_tokens_details.cached_tokens}) apart, and output ({@code completion_tokens},
     * {@code output_tokens}; reasoning tokens are part of it). A {@code total_tokens} above input
     * plus output counts the difference as output (the dearer kind); {@code null} when {@code usage}
     * is not an object.
     */
    static @Nullable TokenUsage usageOf(@Nullable JsonNode usage) {
        if (usage == null || !usage.isObject()) {
            return null;
        }
        boolean responses = usage.has("input_tokens") || usage.has("output_tokens");
        long input = Math.max(
                0, usage.path(responses ? "input_tokens" : "prompt_tokens").asLong(0));
        long output = Math.max(
                0, usage.path(responses ? "output_tokens" : "completion_tokens").asLong(0));
        long cached = usage.path(responses ? "input_tokens_details" : "prompt_tokens_details")
                .path("cached_tokens")
                .asLong(0);
        long total = usage.path("total_tokens").asLong(0);
        return TokenUsage.openAi(input, cached, Math.max(output, total - input));
    }
}
