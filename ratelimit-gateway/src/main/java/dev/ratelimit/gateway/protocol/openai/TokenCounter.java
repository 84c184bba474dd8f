package dev.ratelimit.gateway.protocol.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.genai.TokenCounts;
import org.jspecify.annotations.Nullable;

/**
 * Reads the prompt of OpenAI's requests (chat messages, completions prompts, embeddings input,
 * Responses input) and counts it with the model's {@link TokenCounts}: the OpenAI protocol's adapter
 * of the one token-count policy. Thread-safe.
 */
public final class TokenCounter {

    static final int PER_MESSAGE = TokenCounts.PER_MESSAGE;
    static final int REPLY_PRIMING = TokenCounts.REPLY_PRIMING;

    /** Counts text as ordinary text: a prompt that spells a special token is counted, never refused. */
    public long count(String model, String text) {
        return TokenCounts.forModel(model).count(text);
    }

    /**
     * Estimates the prompt tokens of a chat request's {@code messages} the way OpenAI's cookbook does:
     * each message's text parts, role and name, plus per-message and reply overheads. Non-text parts
     * (images, audio) count nothing here; the upstream's {@code usage} settles them.
     */
    public long chatPrompt(String model, JsonNode messages) {
        TokenCounts counts = TokenCounts.forModel(model);
        long tokens = REPLY_PRIMING;
        for (JsonNode message : messages) {
            tokens += PER_MESSAGE;
            tokens += text(counts, message.get("role"));
            tokens += text(counts, message.get("name"));
            tokens += content(counts, message.get("content"));
            JsonNode toolCalls = message.get("tool_calls");
            if (toolCalls != null && toolCalls.isArray()) {
                for (JsonNode call : toolCalls) {
                    JsonNode function = call.path("function");
                    tokens += text(counts, function.get("name")) + text(counts, function.get("arguments"));
                }
            }
        }
        return tokens;
    }

    /** Counts an embeddings request's {@code input}: a string, strings, or token arrays. */
    public long embeddingInput(String model, JsonNode input) {
        TokenCounts counts = TokenCounts.forModel(model);
        if (input.isTextual()) {
            return counts.count(input.textValue());
        }
        long tokens = 0;
        boolean tokenIds = true;
        for (JsonNode item : input) {
            if (item.isTextual()) {
                tokens += counts.count(item.textValue());
                tokenIds = false;
            } else if (item.isArray()) {
                tokens += item.size(); // one input already given as token ids
                tokenIds = false;
            }
        }
        return tokenIds ? input.size() : tokens; // a flat array of token ids is one input
    }

    /**
     * Counts a legacy completions request's {@code prompt}: a string, strings, token ids or arrays of
     * token ids (counted as they are), with no chat overheads.
     */
    public long completionPrompt(String model, JsonNode prompt) {
        return embeddingInput(model, prompt);
    }

    /**
     * Estimates the input tokens of a Responses API request as {@link #chatPrompt} does a chat's:
     * {@code instructions} as a system message, a string {@code input} as one user message, and each
     * input item with the per-message overhead plus its text: a message's role and text parts, a
     * function call's name and arguments, a tool output's text, a reasoning item's summary. Images,
     * files and items the upstream stores ({@code item_reference}, {@code previous_response_id}) count
     * nothing here; the upstream's {@code usage} settles them.
     */
    public long responsesInput(String model, @Nullable JsonNode instructions, @Nullable JsonNode input) {
        TokenCounts counts = TokenCounts.forModel(model);
        long tokens = REPLY_PRIMING;
        if (instructions != null && instructions.isTextual()) {
            tokens += PER_MESSAGE + counts.count("system") + text(counts, instructions);
        }
        if (input != null && input.isTextual()) {
            tokens += PER_MESSAGE + counts.count("user") + text(counts, input);
        } else if (input != null && input.isArray()) {
            for (JsonNode item : input) {
                tokens += PER_MESSAGE;
                tokens += text(counts, item.get("role")) + content(counts, item.get("content"));
                tokens += text(counts, item.get("name")) + text(counts, item.get("arguments"));
                tokens += content(counts, item.get("output")) + text(counts, item.get("input"));
                tokens += content(counts, item.get("summary"));
            }
        }
        return tokens;
    }

    private static long content(TokenCounts counts, @Nullable JsonNode content) {
        if (content == null || content.isNull()) {
            return 0;
        }
        if (content.isTextual()) {
            return counts.count(content.textValue());
        }
        long tokens = 0;
        for (JsonNode part : content) {
            tokens += text(counts, part.get("text"));
        }
        return tokens;
    }

    private static long text(TokenCounts counts, @Nullable JsonNode node) {
        return node != null && node.isTextual() ? counts.count(node.textValue()) : 0;
    }
}
