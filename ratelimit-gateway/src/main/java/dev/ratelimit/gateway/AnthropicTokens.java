package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's estimate of a Messages API prompt. Claude's tokenizer is not public, so each text is
 * counted the conservative way: the larger of 1.5 times its {@code cl100k_base} tokens and a third
 * of its characters (code points). Claude's tokenizers split English into more pieces than {@code
 * cl100k_base} does, but by far less than half again; a third of the characters guards text that
 * {@code cl100k_base} packs unusually well (long runs of spaces, repeated punctuation). On top: 5
 * tokens per message and 5 for the system prompt (role and turn markers), 10 for the reply's start,
 * 400 when tools are offered (the tool-use instructions the API adds), and for each image or
 * non-text document 1,600 (the most an image of the API's largest recommended size costs).
 *
 * <p>Measured on real English text (the project's own docs, see {@code AnthropicTokensTest}) this
 * over-reserves against the public Claude tokenizer by the figure docs/gateway.md states. The
 * reservation is settled to the upstream's {@code usage}, so the over-reservation only holds budget
 * while a request runs. Thread-safe.
 */
final class AnthropicTokens {

    static final int PER_MESSAGE = 5;
    static final int SYSTEM = 5;
    static final int REPLY = 10;
    static final int TOOLS = 400;
    static final int IMAGE = 1_600;

    private final Encoding cl100k = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

    /** The conservative count of one text: max(1.5 x cl100k tokens, code points / 3), rounded up. */
    long text(String text) {
        if (text.isEmpty()) {
            return 0;
        }
        long bpe = cl100k.countTokensOrdinary(text);
        long byTokens = (bpe * 3 + 1) / 2;
        long byChars = (text.codePointCount(0, text.length()) + 2) / 3;
        return Math.max(byTokens, byChars);
    }

    /** The prompt of a Messages API request: {@code system}, {@code messages} and {@code tools}. */
    long prompt(JsonNode body) {
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
        if (content == null || content.isNull()) {
            return 0;
        }
        if (content.isTextual()) {
            return text(content.textValue());
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
            case "text" -> text(block.path("text").asText(""));
            case "tool_use", "server_tool_use" ->
                text(block.path("name").asText("")) + text(block.path("input").toString());
            case "tool_result" -> 5 + content(block.get("content"));
            case "thinking" -> text(block.path("thinking").asText(""));
            case "redacted_thinking" -> text(block.path("data").asText(""));
            case "image" -> IMAGE;
            case "document" ->
                "text".equals(block.path("source").path("type").asText())
                        ? text(block.path("source").path("data").asText(""))
                        : IMAGE;
            default -> text(block.toString()); // a block we do not know: all of it, as text
        };
    }
}
