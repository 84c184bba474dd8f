package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Counts tokens with OpenAI's tokenizers (jtokkit): {@code o200k_base} for the GPT-4o, GPT-4.1,
 * GPT-5 and o-series models, {@code cl100k_base} for everything else, which is also the fair guess
 * for models of other vendors behind an OpenAI-compatible server. Thread-safe.
 */
final class TokenCounter {

    /** Tokens OpenAI adds per chat message (role and separators) and to prime the reply. */
    static final int PER_MESSAGE = 3;

    static final int REPLY_PRIMING = 3;

    /** Loading a vocabulary takes a second or so: the process loads each once. */
    private static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();

    private final Encoding o200k = REGISTRY.getEncoding(EncodingType.O200K_BASE);
    private final Encoding cl100k = REGISTRY.getEncoding(EncodingType.CL100K_BASE);

    Encoding encodingFor(String model) {
        String name = model.toLowerCase(Locale.ROOT);
        int slash = name.lastIndexOf('/'); // "openai/gpt-4o" as routers name it
        if (slash >= 0) {
            name = name.substring(slash + 1);
        }
        boolean o200 = name.startsWith("gpt-4o")
                || name.startsWith("gpt-4.1")
                || name.startsWith("gpt-4.5")
                || name.startsWith("gpt-5")
                || name.startsWith("chatgpt-4o")
                || name.matches("o[1-9]([-.].*)?");
        return o200 ? o200k : cl100k;
    }

    /** Counts text as ordinary text: a prompt that spells a special token is counted, never refused. */
    int count(String model, String text) {
        return encodingFor(model).countTokensOrdinary(text);
    }

    /**
     * Estimates the prompt tokens of a chat request's {@code messages} the way OpenAI's cookbook does:
     * each message's text parts, role and name, plus per-message and reply overheads. Non-text parts
     * (images, audio) count nothing here; the upstream's {@code usage} settles them.
     */
    long chatPrompt(String model, JsonNode messages) {
        Encoding encoding = encodingFor(model);
        long tokens = REPLY_PRIMING;
        for (JsonNode message : messages) {
            tokens += PER_MESSAGE;
            tokens += text(encoding, message.get("role"));
            tokens += text(encoding, message.get("name"));
            tokens += content(encoding, message.get("content"));
            JsonNode toolCalls = message.get("tool_calls");
            if (toolCalls != null && toolCalls.isArray()) {
                for (JsonNode call : toolCalls) {
                    JsonNode function = call.path("function");
                    tokens += text(encoding, function.get("name")) + text(encoding, function.get("arguments"));
                }
            }
        }
        return tokens;
    }

    /** Counts an embeddings request's {@code input}: a string, strings, or token arrays. */
    long embeddingInput(String model, JsonNode input) {
        Encoding encoding = encodingFor(model);
        if (input.isTextual()) {
            return encoding.countTokensOrdinary(input.textValue());
        }
        long tokens = 0;
        boolean tokenIds = true;
        for (JsonNode item : input) {
            if (item.isTextual()) {
                tokens += encoding.countTokensOrdinary(item.textValue());
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
    long completionPrompt(String model, JsonNode prompt) {
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
    long responsesInput(String model, @Nullable JsonNode instructions, @Nullable JsonNode input) {
        Encoding encoding = encodingFor(model);
        long tokens = REPLY_PRIMING;
        if (instructions != null && instructions.isTextual()) {
            tokens += PER_MESSAGE + encoding.countTokensOrdinary("system") + text(encoding, instructions);
        }
        if (input != null && input.isTextual()) {
            tokens += PER_MESSAGE + encoding.countTokensOrdinary("user") + text(encoding, input);
        } else if (input != null && input.isArray()) {
            for (JsonNode item : input) {
                tokens += PER_MESSAGE;
                tokens += text(encoding, item.get("role")) + content(encoding, item.get("content"));
                tokens += text(encoding, item.get("name")) + text(encoding, item.get("arguments"));
                tokens += content(encoding, item.get("output")) + text(encoding, item.get("input"));
                tokens += content(encoding, item.get("summary"));
            }
        }
        return tokens;
    }

    private static long content(Encoding encoding, @Nullable JsonNode content) {
        if (content == null || content.isNull()) {
            return 0;
        }
        if (content.isTextual()) {
            return encoding.countTokensOrdinary(content.textValue());
        }
        long tokens = 0;
        for (JsonNode part : content) {
            tokens += text(encoding, part.get("text"));
        }
        return tokens;
    }

    private static long text(Encoding encoding, @Nullable JsonNode node) {
        return node != null && node.isTextual() ? encoding.countTokensOrdinary(node.textValue()) : 0;
    }
}
