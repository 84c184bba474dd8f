package dev.ratelimit.gateway.protocol.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.BadRequest;

/**
 * Validates Gemini API bodies before any budget is touched, naming the field in Google's terms
 * ({@code contents[0].parts}); a bad body is a 400 {@code INVALID_ARGUMENT} whose {@code
 * google.rpc.BadRequest} detail names the field.
 */
public final class GeminiRequests {

    /** The most candidates a request may ask for. */
    static final int MAX_CANDIDATES = 8;

    private GeminiRequests() {}

    /**
     * A validated {@code generateContent} request.
     *
     * @param maxOutputTokens {@code generationConfig.maxOutputTokens}, else the configured default
     * @param candidates {@code generationConfig.candidateCount}, else 1
     */
    record Generate(long maxOutputTokens, int candidates) {}

    /** Validates a {@code generateContent} or {@code streamGenerateContent} body. */
    static Generate generate(ObjectNode body, long defaultMaxOutputTokens) throws BadRequest {
        contents(body, "", true);
        long maxOutput = defaultMaxOutputTokens;
        int candidates = 1;
        JsonNode config = body.get("generationConfig");
        if (present(config)) {
            if (!config.isObject()) {
                throw invalid("generationConfig", "'generationConfig' must be an object.");
            }
            JsonNode max = config.get("maxOutputTokens");
            if (present(max)) {
                maxOutput = positive(max, "generationConfig.maxOutputTokens", Long.MAX_VALUE);
            }
            JsonNode count = config.get("candidateCount");
            if (present(count)) {
                candidates = (int) positive(count, "generationConfig.candidateCount", MAX_CANDIDATES);
            }
        }
        return new Generate(maxOutput, candidates);
    }

    /**
     * Validates a {@code countTokens} body: {@code contents}, or a {@code generateContentRequest}
     * holding them.
     */
    static void countTokens(ObjectNode body) throws BadRequest {
        JsonNode request = body.get("generateContentRequest");
        if (!present(body.get("contents")) && present(request)) {
            if (!request.isObject()) {
                throw invalid("generateContentRequest", "'generateContentRequest' must be an object.");
            }
            contents(request, "generateContentRequest.", true);
            return;
        }
        contents(body, "", true);
    }

    /** {@code contents} (each with {@code parts}), {@code systemInstruction} and {@code tools}. */
    private static void contents(JsonNode body, String at, boolean required) throws BadRequest {
        JsonNode contents = body.get("contents");
        if (!present(contents)) {
            if (required) {
                throw invalid(at + "contents", "'" + at + "contents' is required: a non-empty list of contents.");
            }
        } else if (!contents.isArray() || contents.isEmpty()) {
            throw invalid(at + "contents", "'" + at + "contents' must be a non-empty list of contents.");
        } else {
            for (int i = 0; i < contents.size(); i++) {
                content(contents.get(i), at + "contents[" + i + "]", true);
            }
        }
        JsonNode system = body.get("systemInstruction");
        if (present(system)) {
            content(system, at + "systemInstruction", false);
        }
        JsonNode tools = body.get("tools");
        if (present(tools) && !tools.isArray()) {
            throw invalid(at + "tools", "'" + at + "tools' must be a list of tools.");
        }
    }

    private static void content(JsonNode content, String at, boolean withRole) throws BadRequest {
        if (!content.isObject()) {
            throw invalid(at, "'" + at + "' must be a content object with 'parts'.");
        }
        JsonNode role = content.get("role");
        if (withRole && present(role) && !role.isTextual()) {
            throw invalid(at + ".role", "'" + at + ".role' must be a string such as 'user' or 'model'.");
        }
        JsonNode parts = content.get("parts");
        if (!present(parts) || !parts.isArray() || parts.isEmpty()) {
            throw invalid(at + ".parts", "'" + at + ".parts' must be a non-empty list of parts.");
        }
        for (int j = 0; j < parts.size(); j++) {
            JsonNode part = parts.get(j);
            String where = at + ".parts[" + j + "]";
            if (!part.isObject() || part.isEmpty()) {
                throw invalid(where, "'" + where + "' must be a part object, such as {\"text\": \"...\"}.");
            }
            if (part.has("text") && !part.get("text").isTextual()) {
                throw invalid(where + ".text", "'" + where + ".text' must be a string.");
            }
        }
    }

    private static long positive(JsonNode value, String field, long max) throws BadRequest {
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() < 1) {
            throw invalid(field, "'" + field + "' must be a positive integer.");
        }
        if (value.longValue() > max) {
            throw invalid(field, "'" + field + "' must be at most " + max + ".");
        }
        return value.longValue();
    }

    private static boolean present(JsonNode value) {
        return value != null && !value.isNull();
    }

    private static BadRequest invalid(String field, String message) {
        return BadRequest.invalid(field, message);
    }
}
