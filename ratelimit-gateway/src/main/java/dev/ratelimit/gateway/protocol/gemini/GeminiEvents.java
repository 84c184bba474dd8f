package dev.ratelimit.gateway.protocol.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.genai.StreamedTokens;
import dev.ratelimit.genai.TokenUsage;
import org.jspecify.annotations.Nullable;

/**
 * What a {@code streamGenerateContent} stream means, read chunk by chunk (each a {@code
 * GenerateContentResponse}, as a server-sent event or an element of the streamed JSON array): the
 * text its candidates produced so far (counted as it passes, to charge a stream that ends early),
 * the {@code usageMetadata} of the last chunk carrying one (cumulative: the last holds the totals),
 * and its end: a candidate's {@code finishReason}, or an {@code error} chunk. Not thread-safe: one
 * per response.
 */
public final class GeminiEvents implements SseRelay.Events {

    private final StreamedTokens produced;
    private @Nullable TokenUsage usage;
    private boolean finished;
    private boolean error;

    /**
     * @param produced counts the text produced as it passes
     */
    public GeminiEvents(StreamedTokens produced) {
        this.produced = produced;
    }

    @Override
    public boolean inspect(@Nullable String type, String data) {
        JsonNode chunk = SseRelay.json(data);
        if (chunk == null) {
            return true;
        }
        if (chunk.has("error")) {
            error = true;
            return true;
        }
        for (JsonNode candidate : chunk.path("candidates")) {
            for (JsonNode part : candidate.path("content").path("parts")) {
                produced.append(part.path("text").asText(""));
                JsonNode call = part.path("functionCall");
                if (call.isObject()) {
                    produced.append(call.path("name").asText(""));
                    produced.append(call.path("args").toString());
                }
            }
            if (!candidate.path("finishReason").asText("").isEmpty()) {
                finished = true;
            }
        }
        TokenUsage reported = usageOf(chunk.get("usageMetadata"));
        if (reported != null) {
            usage = reported;
        }
        return true;
    }

    /**
     * A {@code usageMetadata} by kind: {@code promptTokenCount} (which includes {@code
     * cachedContentTokenCount}) less the cached part, plus {@code toolUsePromptTokenCount}, as input;
     * the cached part as cached input; {@code candidatesTokenCount} plus {@code thoughtsTokenCount}
     * (billed as output) as output. A {@code totalTokenCount} above all of them counts the
     * difference as output (the dearer kind). {@code null} when it is not an object.
     */
    static @Nullable TokenUsage usageOf(@Nullable JsonNode metadata) {
        if (metadata == null || !metadata.isObject()) {
            return null;
        }
        long prompt = Math.max(0, metadata.path("promptTokenCount").asLong(0));
        long cached = Math.min(
                prompt, Math.max(0, metadata.path("cachedContentTokenCount").asLong(0)));
        long toolUse = Math.max(0, metadata.path("toolUsePromptTokenCount").asLong(0));
        long output = Math.max(0, metadata.path("candidatesTokenCount").asLong(0))
                + Math.max(0, metadata.path("thoughtsTokenCount").asLong(0));
        long input = prompt - cached + toolUse;
        long total = metadata.path("totalTokenCount").asLong(0);
        return new TokenUsage(input, cached, 0, Math.max(output, total - input - cached));
    }

    @Override
    public boolean finished() {
        return finished || error;
    }

    @Override
    public boolean failed() {
        return error && !finished;
    }

    /**
     * The last {@code usageMetadata}'s input (else the prompt estimate) and output: once a candidate
     * finished, the reported output; before, at least the text produced, counted.
     */
    @Override
    public TokenUsage used(long promptTokens) {
        TokenUsage reported = usage;
        TokenUsage in = reported != null ? reported : TokenUsage.of(promptTokens, 0);
        long out = finished && reported != null ? reported.output() : Math.max(in.output(), produced.count());
        return new TokenUsage(in.input(), in.cachedInput(), 0, out);
    }

    @Override
    public boolean nothing() {
        return produced.isEmpty() && !finished;
    }

    @Override
    public String ending() {
        return finished ? "stream_completed" : "stream_error";
    }

    @Override
    public String brokenNotice(String message) {
        return "data: " + errorChunk(message) + "\r\n\r\n";
    }

    /** The error a stream that broke off ends with: Google's shape, status {@code UNAVAILABLE}. */
    public static String errorChunk(String message) {
        return Gemini.errorBody(503, message, null, null).toString();
    }
}
