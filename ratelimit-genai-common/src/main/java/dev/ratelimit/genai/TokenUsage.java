package dev.ratelimit.genai;

/**
 * The tokens one model call used, by how providers bill them: input read fresh, input read from the
 * provider's prompt cache, input written to it, and output (reasoning tokens included).
 *
 * <p>OpenAI reports cached tokens inside its prompt count ({@code prompt_tokens_details.cached_tokens},
 * {@code input_tokens_details.cached_tokens}): {@link #openAi} takes them out of {@code input}.
 * Anthropic reports the three kinds of input apart ({@code input_tokens}, {@code
 * cache_read_input_tokens}, {@code cache_creation_input_tokens}).
 *
 * @param input input tokens billed at the input price
 * @param cachedInput input tokens read from the prompt cache, billed at the cached-input price
 * @param cacheWrite input tokens written to the prompt cache, billed at the cache-write price
 * @param output output tokens, reasoning included, billed at the output price
 */
public record TokenUsage(long input, long cachedInput, long cacheWrite, long output) {

    /**
     * Validates the counts.
     *
     * @param input input tokens billed at the input price
     * @param cachedInput input tokens read from the prompt cache, billed at the cached-input price
     * @param cacheWrite input tokens written to the prompt cache, billed at the cache-write price
     * @param output output tokens, reasoning included, billed at the output price
     * @throws IllegalArgumentException if a count is negative
     */
    public TokenUsage {
        nonNegative(input, "input");
        nonNegative(cachedInput, "cachedInput");
        nonNegative(cacheWrite, "cacheWrite");
        nonNegative(output, "output");
    }

    /**
     * Creates a usage of fresh input and output only.
     *
     * @param input the input tokens
     * @param output the output tokens
     * @return the usage
     */
    public static TokenUsage of(long input, long output) {
        return new TokenUsage(input, 0, 0, output);
    }

    /**
     * Creates a usage from OpenAI's figures, whose prompt count includes the cached tokens.
     *
     * @param promptTokens the prompt (input) tokens, cached ones included
     * @param cachedTokens the cached part of the prompt; more than the prompt counts as all of it
     * @param outputTokens the completion (output) tokens, reasoning included
     * @return the usage
     */
    public static TokenUsage openAi(long promptTokens, long cachedTokens, long outputTokens) {
        long cached = Math.min(Math.max(0, cachedTokens), Math.max(0, promptTokens));
        return new TokenUsage(promptTokens - cached, cached, 0, outputTokens);
    }

    /**
     * Returns every token of the call, as token windows count them.
     *
     * @return input of every kind plus output
     */
    public long total() {
        return input + cachedInput + cacheWrite + output;
    }

    /**
     * Returns the input tokens of every kind.
     *
     * @return fresh, cached and written input
     */
    public long allInput() {
        return input + cachedInput + cacheWrite;
    }

    private static void nonNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
    }
}
