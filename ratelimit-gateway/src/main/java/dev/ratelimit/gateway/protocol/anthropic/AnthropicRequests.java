package dev.ratelimit.gateway.protocol.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.BadRequest;

/**
 * Validates Messages API bodies before any budget is touched, with messages in the API's own terms
 * (the field's path, what it must be); a bad body is a 400 {@code invalid_request_error}.
 */
public final class AnthropicRequests {

    private AnthropicRequests() {}

    /**
     * A validated request.
     *
     * @param maxTokens the request's {@code max_tokens}; 0 for {@code count_tokens}, which has none
     */
    public record Messages(ObjectNode body, String model, long maxTokens, boolean stream) {}

    /**
     * Validates a {@code POST /v1/messages} body ({@code maxTokensRequired}) or a {@code
     * count_tokens} body (no {@code max_tokens}, no {@code stream}).
     */
    public static Messages messages(ObjectNode body, boolean maxTokensRequired) throws BadRequest {
        JsonNode model = body.get("model");
        if (model == null || model.isNull()) {
            throw invalid("model: Field required");
        }
        if (!model.isTextual() || model.textValue().isBlank()) {
            throw invalid("model: Input should be a non-empty string");
        }
        long maxTokens = 0;
        if (maxTokensRequired) {
            JsonNode max = body.get("max_tokens");
            if (max == null || max.isNull()) {
                throw invalid("max_tokens: Field required");
            }
            if (!max.isIntegralNumber() || !max.canConvertToLong() || max.longValue() < 1) {
                throw invalid("max_tokens: Input should be a positive integer");
            }
            maxTokens = max.longValue();
        }
        JsonNode messages = body.get("messages");
        if (messages == null || messages.isNull()) {
            throw invalid("messages: Field required");
        }
        if (!messages.isArray() || messages.isEmpty()) {
            throw invalid("messages: Input should be a non-empty list of messages");
        }
        for (int i = 0; i < messages.size(); i++) {
            JsonNode message = messages.get(i);
            String at = "messages." + i;
            if (!message.isObject()) {
                throw invalid(at + ": Input should be an object with 'role' and 'content'");
            }
            String role = message.path("role").asText("");
            if (!message.path("role").isTextual() || !(role.equals("user") || role.equals("assistant"))) {
                throw invalid(at + ".role: Input should be 'user' or 'assistant'");
            }
            content(message.get("content"), at + ".content", true);
        }
        JsonNode system = body.get("system");
        if (system != null && !system.isNull()) {
            content(system, "system", false);
        }
        JsonNode tools = body.get("tools");
        if (tools != null && !tools.isNull() && !tools.isArray()) {
            throw invalid("tools: Input should be a list of tools");
        }
        boolean stream = false;
        JsonNode value = body.get("stream");
        if (value != null && !value.isNull()) {
            if (!value.isBoolean()) {
                throw invalid("stream: Input should be a valid boolean");
            }
            stream = value.booleanValue();
        }
        return new Messages(body, model.textValue(), maxTokens, stream);
    }

    private static void content(JsonNode content, String at, boolean required) throws BadRequest {
        if (content == null || content.isNull()) {
            if (required) {
                throw invalid(at + ": Field required");
            }
            return;
        }
        if (content.isTextual()) {
            return;
        }
        if (!content.isArray()) {
            throw invalid(at + ": Input should be a string or a list of content blocks");
        }
        for (int j = 0; j < content.size(); j++) {
            JsonNode block = content.get(j);
            if (!block.isObject() || !block.path("type").isTextual()) {
                throw invalid(at + "." + j + ": Input should be a content block with a 'type'");
            }
            if (block.path("type").textValue().equals("text")
                    && !block.path("text").isTextual()) {
                throw invalid(at + "." + j + ".text: Field required");
            }
        }
    }

    private static BadRequest invalid(String message) {
        return new BadRequest(400, "invalid_request_error", null, message);
    }
}
