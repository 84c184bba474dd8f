package dev.ratelimit.gateway.protocol.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.genai.StreamedTokens;
import dev.ratelimit.genai.TokenUsage;
import org.jspecify.annotations.Nullable;

/**
 * What a Messages API stream means, read by {@link SseRelay} event by event: {@code message_start}'s
 * {@code usage.input_tokens} (and cache tokens), {@code message_delta}'s cumulative {@code
 * usage.output_tokens}, the text produced so far (to charge a stream that ends early), and its end:
 * {@code message_stop}, or an {@code error} event. Not thread-safe: one per response.
 */
public final class AnthropicEvents implements SseRelay.Events {

    private final StreamedTokens produced;
    private @Nullable TokenUsage input; // message_start's input, by kind
    private long output;
    private boolean stopped;
    private boolean error;

    /**
     * @param produced counts the text produced as it passes, for a stream that ends before its usage is final
     */
    AnthropicEvents(StreamedTokens produced) {
        this.produced = produced;
    }

    @Override
    public boolean inspect(@Nullable String type, String data) {
        JsonNode event = SseRelay.json(data);
        if (event == null) {
            return true;
        }
        switch (event.path("type").asText("")) {
            case "message_start" -> {
                JsonNode usage = event.path("message").path("usage");
                input = larger(input, usageOf(usage, 0));
                output = Math.max(output, usage.path("output_tokens").asLong(0));
            }
            case "content_block_start" -> {
                JsonNode block = event.path("content_block");
                produced.append(block.path("text").asText(""));
                if (block.path("type").asText().equals("tool_use")) {
                    produced.append(block.path("name").asText(""));
                }
            }
            case "content_block_delta" -> {
                JsonNode delta = event.path("delta");
                produced.append(delta.path("text").asText(""));
                produced.append(delta.path("partial_json").asText(""));
                produced.append(delta.path("thinking").asText(""));
            }
            case "message_delta" -> {
                JsonNode usage = event.path("usage");
                output = Math.max(output, usage.path("output_tokens").asLong(0));
                if (usage.has("input_tokens")) { // newer API versions repeat the input here, cumulative
                    input = larger(input, usageOf(usage, 0));
                }
            }
            case "message_stop" -> stopped = true;
            case "error" -> error = true;
            default -> {
                // ping, content_block_stop and event types to come: relayed, nothing to read
            }
        }
        return true;
    }

    /**
     * A Messages API {@code usage} by kind: {@code input_tokens} fresh, {@code
     * cache_read_input_tokens} read from the cache, {@code cache_creation_input_tokens} written to it,
     * all of which the prompt cost, and {@code output} as given.
     */
    public static TokenUsage usageOf(JsonNode usage, long output) {
        return new TokenUsage(
                Math.max(0, usage.path("input_tokens").asLong(0)),
                Math.max(0, usage.path("cache_read_input_tokens").asLong(0)),
                Math.max(0, usage.path("cache_creation_input_tokens").asLong(0)),
                output);
    }

    /** The later of two cumulative reports of the input: the one with more tokens in all. */
    private static TokenUsage larger(@Nullable TokenUsage earlier, TokenUsage later) {
        return earlier == null || later.allInput() >= earlier.allInput() ? later : earlier;
    }

    @Override
    public boolean finished() {
        return stopped || error;
    }

    @Override
    public boolean failed() {
        return error && !stopped;
    }

    /**
     * {@code message_start}'s input (else the prompt estimate) plus the output: after {@code
     * message_stop} the last {@code message_delta}'s, before it at least the text produced, counted.
     */
    @Override
    public TokenUsage used(long promptTokens) {
        TokenUsage in = input != null ? input : TokenUsage.of(promptTokens, 0);
        long out = stopped ? output : Math.max(output, produced.count());
        return new TokenUsage(in.input(), in.cachedInput(), in.cacheWrite(), out);
    }

    @Override
    public boolean nothing() {
        return produced.isEmpty();
    }

    @Override
    public String ending() {
        return stopped ? "stream_completed" : "stream_error";
    }

    @Override
    public String brokenNotice(String message) {
        return "event: error\ndata: " + Anthropic.errorBody("api_error", message) + "\n\n";
    }
}
