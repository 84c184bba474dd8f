package dev.ratelimit.gateway.protocol.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.TokenUsage;

/**
 * OpenAI's token-metered endpoints: what each validates, how it estimates, and where its usage is.
 *
 * <table>
 *   <caption>The estimate reserved per endpoint</caption>
 *   <tr><th>endpoint</th><th>estimate</th></tr>
 *   <tr><td>{@code POST /v1/chat/completions}</td><td>counted {@code messages} + {@code n} ×
 *       ({@code max_completion_tokens}, else {@code max_tokens}, else the configured default)</td></tr>
 *   <tr><td>{@code POST /v1/completions}</td><td>counted {@code prompt} + prompts × {@code
 *       max(n, best_of)} × ({@code max_tokens}, else the configured default)</td></tr>
 *   <tr><td>{@code POST /v1/embeddings}</td><td>counted {@code input}</td></tr>
 *   <tr><td>{@code POST /v1/responses}</td><td>counted {@code instructions} and {@code input} +
 *       ({@code max_output_tokens}, else the configured default); context the upstream keeps
 *       ({@code previous_response_id}) is not in the estimate and is settled from the usage</td></tr>
 * </table>
 */
public enum OpenAiEndpoint implements Endpoint {
    CHAT("chat", "/chat/completions", "lower max_completion_tokens (or max_tokens) or shorten the messages") {
        @Override
        public Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter tokens) throws BadRequest {
            Requests.Chat chat = Requests.chat(body, limits.defaultMaxCompletionTokens());
            long prompt = tokens.chatPrompt(chat.model(), body.get("messages"));
            boolean rewritten = askUsage(chat.stream(), chat.clientWantsUsage(), body);
            return new Call(
                    chat.model(),
                    body,
                    prompt,
                    prompt + chat.n() * chat.maxCompletionTokens(),
                    chat.stream(),
                    chat.clientWantsUsage(),
                    rewritten);
        }

        @Override
        String answerText(JsonNode answer) {
            StringBuilder text = new StringBuilder();
            for (JsonNode choice : answer.path("choices")) {
                text.append(choice.path("message").path("content").asText(""));
            }
            return text.toString();
        }
    },

    COMPLETIONS("completions", "/completions", "lower max_tokens, n or best_of, or shorten the prompt") {
        @Override
        public Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter tokens) throws BadRequest {
            Requests.Completions completions = Requests.completions(body, limits.defaultMaxCompletionTokens());
            long prompt = tokens.completionPrompt(completions.model(), body.get("prompt"));
            boolean rewritten = askUsage(completions.stream(), completions.clientWantsUsage(), body);
            long answers = (long) completions.prompts() * completions.choices();
            return new Call(
                    completions.model(),
                    body,
                    prompt,
                    prompt + answers * completions.maxTokens(),
                    completions.stream(),
                    completions.clientWantsUsage(),
                    rewritten);
        }

        @Override
        String answerText(JsonNode answer) {
            StringBuilder text = new StringBuilder();
            for (JsonNode choice : answer.path("choices")) {
                text.append(choice.path("text").asText(""));
            }
            return text.toString();
        }
    },

    EMBEDDINGS("embeddings", "/embeddings", "shorten the input") {
        @Override
        public Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter tokens) throws BadRequest {
            Requests.Embeddings embeddings = Requests.embeddings(body);
            long prompt = tokens.embeddingInput(embeddings.model(), body.get("input"));
            return new Call(embeddings.model(), body, prompt, prompt, false, false);
        }

        @Override
        String answerText(JsonNode answer) {
            return "";
        }
    },

    RESPONSES("responses", "/responses", "lower max_output_tokens or shorten the input") {
        @Override
        public Call parse(ObjectNode body, GatewayConfig.Limits limits, TokenCounter tokens) throws BadRequest {
            Requests.Responses responses = Requests.responses(body, limits.defaultMaxCompletionTokens());
            long input = tokens.responsesInput(responses.model(), body.get("instructions"), body.get("input"));
            return new Call(
                    responses.model(), body, input, input + responses.maxOutputTokens(), responses.stream(), true);
        }

        /**
         * A background response answers at once, {@code queued} and without usage: the work is still
         * to come, so the whole reservation is committed (its usage is never seen by the gateway).
         */
        @Override
        public TokenUsage plainUsage(JsonNode answer, Call call, TokenCounter tokens) {
            String status = answer.path("status").asText("");
            if (Endpoint.usageOf(answer.get("usage")) == null
                    && (status.equals("queued") || status.equals("in_progress"))) {
                return call.estimated();
            }
            return super.plainUsage(answer, call, tokens);
        }

        @Override
        String answerText(JsonNode answer) {
            StringBuilder text = new StringBuilder();
            for (JsonNode item : answer.path("output")) {
                text.append(item.path("arguments").asText(""));
                for (JsonNode part : item.path("content")) {
                    text.append(part.path("text").asText(""))
                            .append(part.path("refusal").asText(""));
                }
            }
            return text.toString();
        }

        @Override
        public SseRelay.Events events(Call call, TokenCounter tokens) {
            return new SseRelay.ResponseEvents(TokenCounts.forModel(call.model()).stream());
        }
    };

    private final String metric;
    private final String upstreamPath;
    private final String tooLargeAdvice;

    OpenAiEndpoint(String metric, String upstreamPath, String tooLargeAdvice) {
        this.metric = metric;
        this.upstreamPath = upstreamPath;
        this.tooLargeAdvice = tooLargeAdvice;
    }

    @Override
    public String metric() {
        return metric;
    }

    @Override
    public String upstreamPath() {
        return upstreamPath;
    }

    @Override
    public Protocol protocol() {
        return Protocol.OPENAI;
    }

    @Override
    public String tooLargeAdvice() {
        return tooLargeAdvice;
    }

    /** The answer's generated text, to count when it carries no {@code usage}. */
    abstract String answerText(JsonNode answer);

    @Override
    public TokenUsage plainUsage(JsonNode answer, Call call, TokenCounter tokens) {
        TokenUsage usage = Endpoint.usageOf(answer.get("usage"));
        return usage != null
                ? usage
                : TokenUsage.of(call.promptTokens(), tokens.count(call.model(), answerText(answer)));
    }

    @Override
    public SseRelay.Events events(Call call, TokenCounter tokens) {
        return new SseRelay.ChoiceEvents(call.clientWantsUsage(), TokenCounts.forModel(call.model()).stream());
    }

    /**
     * Asks a chat or completions stream's upstream for its usage chunk, which the gateway needs to
     * settle; the chunk is dropped on the way back unless the client asked for it too.
     *
     * @return whether {@code body} was changed
     */
    private static boolean askUsage(boolean stream, boolean clientWantsUsage, ObjectNode body) {
        if (stream && !clientWantsUsage) {
            ObjectNode options =
                    body.has("stream_options") && body.get("stream_options").isObject()
                            ? (ObjectNode) body.get("stream_options")
                            : body.putObject("stream_options");
            options.put("include_usage", true);
            return true;
        }
        return false;
    }
}
