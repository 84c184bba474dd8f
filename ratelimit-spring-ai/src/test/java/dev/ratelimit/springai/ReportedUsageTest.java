package dev.ratelimit.springai;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.genai.types.GenerateContentResponseUsageMetadata;
import dev.ratelimit.genai.TokenUsage;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.google.genai.metadata.GoogleGenAiUsage;

/**
 * How Spring AI's usage splits into the kinds of tokens that are priced; OpenAI's own (cached tokens
 * inside the prompt count) and Gemini's run against the stubs in {@link RateLimitAdvisorContract}.
 */
class ReportedUsageTest {

    @Test
    @DisplayName("cache reads and writes beside a prompt count that leaves them out (Anthropic's) are apart")
    void cacheFiguresOfOtherProvidersAreApartFromThePrompt() {
        // Spring AI's Anthropic model: prompt = input_tokens, total = input + output
        DefaultUsage usage = new DefaultUsage(100, 20, 120, Map.of("input_tokens", 100), 300L, 50L);

        assertThat(ReportedUsage.of(usage, 7, 3)).isEqualTo(new TokenUsage(100, 300, 50, 20));
    }

    @Test
    @DisplayName(
            "Gemini's cached content is inside its prompt count; its thinking tokens, in the total only, are output")
    void geminiCachedContentIsInsideThePromptAndThoughtsAreOutput() {
        Usage usage = GoogleGenAiUsage.from(GenerateContentResponseUsageMetadata.builder()
                .promptTokenCount(100)
                .cachedContentTokenCount(60)
                .candidatesTokenCount(20)
                .thoughtsTokenCount(30)
                .totalTokenCount(150)
                .build());

        assertThat(ReportedUsage.of(usage, 1, 1)).isEqualTo(new TokenUsage(40, 60, 0, 50));
    }

    @Test
    @DisplayName("a usage without cache figures is fresh input and output")
    void withoutCacheFiguresAllInputIsFresh() {
        assertThat(ReportedUsage.of(new DefaultUsage(11, 7), 1, 1)).isEqualTo(TokenUsage.of(11, 7));
    }

    @Test
    @DisplayName("a total above the parts is output the provider reports only in its total (thinking)")
    void aTotalAboveThePartsIsOutput() {
        assertThat(ReportedUsage.of(new DefaultUsage(10, 5, 40), 1, 1)).isEqualTo(TokenUsage.of(10, 30));
    }

    @Test
    @DisplayName("a part the provider left out falls back to the counted one")
    void missingPartsFallBackToTheCount() {
        assertThat(ReportedUsage.of(usage(null, 5), 9, 1)).isEqualTo(TokenUsage.of(9, 5));
        assertThat(ReportedUsage.of(usage(8, null), 1, 4)).isEqualTo(TokenUsage.of(8, 4));
    }

    /** A provider's own usage that leaves figures out (Spring AI's {@code DefaultUsage} reads them as 0). */
    private static Usage usage(@Nullable Integer prompt, @Nullable Integer completion) {
        return new Usage() {
            @Override
            public @Nullable Integer getPromptTokens() {
                return prompt;
            }

            @Override
            public @Nullable Integer getCompletionTokens() {
                return completion;
            }

            @Override
            public @Nullable Object getNativeUsage() {
                return null;
            }
        };
    }
}
