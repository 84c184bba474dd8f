package dev.ratelimit.springai;

import dev.ratelimit.genai.TokenUsage;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.metadata.Usage;

/**
 * Reads Spring AI's {@link Usage} as the kinds of tokens providers bill: fresh input, cached input,
 * cache writes and output.
 *
 * <p>Spring AI 2.0 reports cache reads and writes beside the prompt count ({@code
 * getCacheReadInputTokens()}, {@code getCacheWriteInputTokens()}), but what the prompt count holds
 * differs by provider: OpenAI's and Gemini's include the cached tokens, Anthropic's does not. OpenAI
 * and Gemini are recognised by their native usage, an object of the OpenAI Java SDK ({@code
 * com.openai}) or of Google's Gen AI SDK ({@code com.google.genai}); any other provider's cache reads
 * and writes are taken as apart from its prompt count, as Anthropic reports them, so a provider that
 * counts them inside is charged more, never less, than it bills.
 *
 * <p>Gemini's thinking tokens are in its total but not in its completion count: the total above the
 * parts is what charges them, at the output price.
 */
final class ReportedUsage {

    private ReportedUsage() {}

    /**
     * Splits a reported usage; a figure the provider left out falls back to the counted one. A
     * reported total above the parts is counted as output (thinking tokens that a provider reports
     * only in its total are billed at the output price).
     */
    static TokenUsage of(Usage usage, long countedPrompt, long countedOutput) {
        Integer prompt = usage.getPromptTokens();
        Integer completion = usage.getCompletionTokens();
        long input = prompt != null ? Math.max(0, prompt) : countedPrompt;
        long output = completion != null ? Math.max(0, completion) : countedOutput;
        long read = count(usage.getCacheReadInputTokens());
        long write = count(usage.getCacheWriteInputTokens());
        TokenUsage split = promptIncludesCache(usage)
                ? TokenUsage.openAi(input, read, output)
                : new TokenUsage(input, read, write, output);
        Integer total = usage.getTotalTokens();
        long beyond = total == null ? 0 : total - split.total();
        return beyond > 0
                ? new TokenUsage(split.input(), split.cachedInput(), split.cacheWrite(), split.output() + beyond)
                : split;
    }

    private static boolean promptIncludesCache(Usage usage) {
        Object nativeUsage = usage.getNativeUsage();
        if (nativeUsage == null) {
            return false;
        }
        String type = nativeUsage.getClass().getName();
        return type.startsWith("com.openai.") || type.startsWith("com.google.genai.");
    }

    private static long count(@Nullable Long tokens) {
        return tokens == null ? 0 : Math.max(0, tokens);
    }
}
