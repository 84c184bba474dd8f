package dev.ratelimit.gateway.protocol.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.genai.TokenCounts;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's estimate of a Gemini API prompt: each text counted by {@link TokenCounts#gemini()}
 * (Gemini's tokenizer is not in jtokkit: the larger of its {@code cl100k_base} tokens and a quarter
 * of its characters; {@code cl100k_base} guards text it splits finely, the quarter the English prose
 * it packs well). On top: {@value #PER_CONTENT} tokens per content (the turn's markers) and for the system
 * instruction, {@value #MEDIA} for each inline or file part (Gemini's charge for an image of up to
 * 384 pixels a side; larger images, audio and video cost more and are settled from the usage),
 * function calls and responses as their JSON, and the tools' declarations as their JSON. Context
 * the upstream keeps ({@code cachedContent}) is not in the estimate: the upstream's {@code
 * usageMetadata} settles it. Thread-safe.
 *
 * <p>Measured against the mock model's count (the stand-in for Gemini's, {@code GeminiTokensTest}),
 * the estimate never comes out below it and over-reserves by the figure docs/gateway.md states.
 */
public final class GeminiTokens {

    static final int PER_CONTENT = 3;
    public static final int MEDIA = 258;

    private final Parts parts = new Parts(this::text, MEDIA, PER_CONTENT);

    /** One text, counted by {@link TokenCounts#gemini()}. */
    public long text(String text) {
        return TokenCounts.gemini().count(text);
    }

    /** The prompt of a {@code generateContent} or {@code countTokens} body. */
    public long prompt(JsonNode body) {
        return parts.prompt(body);
    }

    /** The text of an answer's candidates: what a plain answer without {@code usageMetadata} produced. */
    long candidates(JsonNode answer) {
        long tokens = 0;
        for (JsonNode candidate : answer.path("candidates")) {
            tokens += parts.content(candidate.get("content")) - (candidate.has("content") ? PER_CONTENT : 0);
        }
        return Math.max(0, tokens);
    }

    /**
     * How a Gemini request's contents are counted, given the count of one text: the one walk of
     * contents and parts, for the gateway's estimate and for the mock model's usage.
     *
     * @param text the count of one text
     * @param media the tokens of an inline or file part (an image, audio, a video, a document)
     * @param perContent the tokens each content and the system instruction add to their parts
     */
    public record Parts(ToLongFunction<String> text, long media, long perContent) {

        /** {@code systemInstruction}, {@code contents} and {@code tools}; a {@code countTokens} body's {@code generateContentRequest} too. */
        public long prompt(JsonNode body) {
            JsonNode request = body.get("generateContentRequest");
            if (request != null && request.isObject() && !body.has("contents")) {
                return prompt(request);
            }
            long tokens = 0;
            JsonNode system = body.get("systemInstruction");
            if (system != null && !system.isNull()) {
                tokens += content(system);
            }
            for (JsonNode content : body.path("contents")) {
                tokens += content(content);
            }
            JsonNode tools = body.get("tools");
            if (tools != null && tools.isArray() && !tools.isEmpty()) {
                tokens += text.applyAsLong(tools.toString()); // declarations, as the model reads them
            }
            return tokens;
        }

        /** One content: its parts plus the per-content overhead; a string counts as one text part. */
        long content(@Nullable JsonNode content) {
            if (content == null || content.isNull()) {
                return 0;
            }
            if (content.isTextual()) {
                return perContent + text.applyAsLong(content.textValue());
            }
            long tokens = perContent;
            for (JsonNode part : content.path("parts")) {
                tokens += part(part);
            }
            return tokens;
        }

        private long part(JsonNode part) {
            if (part.has("text")) {
                return text.applyAsLong(part.path("text").asText(""));
            }
            if (part.has("inlineData") || part.has("fileData")) {
                return media;
            }
            if (part.has("functionCall")) {
                JsonNode call = part.path("functionCall");
                return text.applyAsLong(call.path("name").asText("")) + json(call.get("args"));
            }
            if (part.has("functionResponse")) {
                JsonNode response = part.path("functionResponse");
                return text.applyAsLong(response.path("name").asText("")) + json(response.get("response"));
            }
            if (part.has("executableCode")) {
                return text.applyAsLong(part.path("executableCode").path("code").asText(""));
            }
            if (part.has("codeExecutionResult")) {
                return text.applyAsLong(
                        part.path("codeExecutionResult").path("output").asText(""));
            }
            return text.applyAsLong(part.toString()); // a part we do not know: all of it, as text
        }

        private long json(@Nullable JsonNode value) {
            return value == null || value.isNull() ? 0 : text.applyAsLong(value.toString());
        }
    }
}
