package dev.ratelimit.fakemodel;

/**
 * The tokens a reply reports, each provider writing them its way: {@code input} is the whole prompt
 * (OpenAI's {@code prompt_tokens}, Gemini's {@code promptTokenCount}; Anthropic's {@code
 * input_tokens} is what is left of it after {@code cachedInput} and {@code cacheWrite}), {@code
 * cachedInput} the part of it read from a prompt cache, {@code cacheWrite} the part written to one
 * (Anthropic's {@code cache_creation_input_tokens}), {@code output} the reply's tokens and {@code
 * thoughts} Gemini's thinking tokens, counted in the total beside the output.
 *
 * @param input the prompt's tokens, cached ones included
 * @param output the reply's tokens
 * @param cachedInput the prompt's tokens read from a cache
 * @param cacheWrite the prompt's tokens written to a cache
 * @param thoughts the thinking tokens
 */
public record Usage(long input, long output, long cachedInput, long cacheWrite, long thoughts) {

    /**
     * Checks that no count is negative and that the cached parts fit in the prompt.
     *
     * @throws IllegalArgumentException if one does not
     */
    public Usage {
        if (input < 0 || output < 0 || cachedInput < 0 || cacheWrite < 0 || thoughts < 0) {
            throw new IllegalArgumentException("token counts must not be negative: " + this);
        }
        if (cachedInput + cacheWrite > input) {
            throw new IllegalArgumentException("cachedInput + cacheWrite must not exceed input: " + this);
        }
    }

    /**
     * Returns a usage of {@code input} prompt and {@code output} reply tokens, nothing cached.
     *
     * @param input the prompt's tokens
     * @param output the reply's tokens
     * @return the usage
     */
    public static Usage of(long input, long output) {
        return new Usage(input, output, 0, 0, 0);
    }

    /**
     * Returns this usage with {@code cachedInput} of its prompt read from a cache.
     *
     * @param cachedInput the cached prompt tokens
     * @return the new usage
     */
    public Usage withCachedInput(long cachedInput) {
        return new Usage(input, output, cachedInput, cacheWrite, thoughts);
    }

    /**
     * Returns this usage with {@code cacheWrite} of its prompt written to a cache.
     *
     * @param cacheWrite the prompt tokens written to a cache
     * @return the new usage
     */
    public Usage withCacheWrite(long cacheWrite) {
        return new Usage(input, output, cachedInput, cacheWrite, thoughts);
    }

    /**
     * Returns this usage with {@code thoughts} thinking tokens.
     *
     * @param thoughts the thinking tokens
     * @return the new usage
     */
    public Usage withThoughts(long thoughts) {
        return new Usage(input, output, cachedInput, cacheWrite, thoughts);
    }

    /**
     * Returns the total: prompt, output and thinking tokens.
     *
     * @return the total tokens
     */
    public long total() {
        return input + output + thoughts;
    }

    /** Anthropic's {@code input_tokens}: the prompt's tokens neither read from nor written to a cache. */
    long freshInput() {
        return input - cachedInput - cacheWrite;
    }
}
