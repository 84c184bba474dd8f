package dev.ratelimit.gateway.protocol.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.genai.TokenCounts;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's estimate of a Messages API prompt: each text counted by {@link TokenCounts#claude()}
 * (Claude's tokenizer is not public: the larger of 1.5 times its {@code cl100k_base} tokens and a
 * third of its characters). On top: 5
 * tokens per message and 5 for the system prompt (role and turn markers), 10 for the reply's start,
 * 400 when tools are offered (the tool-use instructions the API adds), and for each image or
 * non-text document 1,600 (the most an image of the API's largest recommended size costs).
 *
 * <p>Measured on real English text (the project's own docs, see {@code AnthropicTokensTest}) this
 * over-reserves against the public Claude tokenizer by the figure docs/gateway.md states. The
 * reservation is settled to the upstream's {@code usage}, so the over-reservation only holds budget
 * while a request runs. Thread-safe.
 */
public final class AnthropicTokens {

    static final int PER_MESSAGE = 5;
    static final int SYSTEM = 5;
    static final int REPLY = 10;
    static final int TOOLS = 400;
    static final int IMAGE = 1_600;
    static final int TOOL_RESULT = 5;

    private final Contents contents = new Contents(this::text, IMAGE, TOOL_RESULT);

    /** The conservative count of one text ({@link TokenCounts#claude()}). */
    public long text(String text) {
        return TokenCounts.claude().count(text);
    }

    /** The prompt of a Messages API request: {@code system}, {@code messages} and {@code tools}. */
    public long prompt(JsonNode body) {
        long tokens = REPLY;
        JsonNode system = body.get("system");
        if (system != null && !system.isNull()) {
            tokens += SYSTEM + content(system);
        }
        for (JsonNode message : body.path("messages")) {
            tokens += PER_MESSAGE + content(message.get("content"));
        }
        JsonNode tools = body.get("tools");
        if (tools != null && tools.isArray() && !tools.isEmpty()) {
            tokens += TOOLS;
            for (JsonNode tool : tools) {
                tokens += text(tool.toString()); // name, description and schema, as the model reads them
            }
        }
        JsonNode choice = body.get("tool_choice");
        if (choice != null && choice.isObject()) {
            tokens += text(choice.toString());
        }
        return tokens;
    }

    /** A content: a string, or an array of blocks (text, tool_use, tool_result, image, document...). */
    long content(@Nullable JsonNode content) {
        return contents.of(content);
    }

    /**
     * How a Messages API content is counted, given the count of one text and the cost of an image:
     * the one walk of content blocks, for the gateway's estimate and for the mock model's usage.
     *
     * @param text the count of one text
     * @param image the tokens of an image or a non-text document
     * @param toolResult the tokens a {@code tool_result} block adds to its content
     */
    public record Contents(ToLongFunction<String> text, long image, long toolResult) {

        /** A content: a string, or an array of blocks (text, tool_use, tool_result, image, document...). */
        public long of(@Nullable JsonNode content) {
            if (content == null || content.isNull()) {
                return 0;
            }
            if (content.isTextual()) {
                return text.applyAsLong(content.textValue());
            }
            long tokens = 0;
            for (JsonNode block : content) {
                tokens += block(block);
            }
            return tokens;
        }

        private long block(JsonNode block) {
            String type = block.path("type").asText("");
            return switch (type) {
                case "text" -> text(block.path("text"));
                case "tool_use", "server_tool_use" ->
                    text(block.path("name"))
                            + text.applyAsLong(block.path("input").toString());
                case "tool_result" -> toolResult + of(block.get("content"));
                case "thinking" -> text(block.path("thinking"));
                case "redacted_thinking" -> text(block.path("data"));
                case "image" -> image;
                case "document" ->
                    "text".equals(block.path("source").path("type").asText())
                            ? text(block.path("source").path("data"))
                            : image;
                default -> text.applyAsLong(block.toString()); // a block we do not know: all of it, as text
            };
        }

        private long text(JsonNode node) {
            return text.applyAsLong(node.asText(""));
        }
    }
}
