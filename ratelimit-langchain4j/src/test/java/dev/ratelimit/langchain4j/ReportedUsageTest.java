package dev.ratelimit.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.model.googleai.GoogleAiGeminiTokenUsage;
import dev.langchain4j.model.openai.OpenAiTokenUsage;
import dev.ratelimit.genai.TokenUsage;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How LangChain4j's token usage, and its providers' subclasses, split into the kinds of tokens that are priced. */
class ReportedUsageTest {

    /** The accessors of langchain4j-anthropic's {@code AnthropicTokenUsage}, which this module's tests do not have. */
    public static final class AnthropicLikeUsage extends dev.langchain4j.model.output.TokenUsage {
        private final Integer cacheRead;
        private final Integer cacheCreation;

        AnthropicLikeUsage(int input, int output, Integer cacheRead, Integer cacheCreation) {
            super(input, output);
            this.cacheRead = cacheRead;
            this.cacheCreation = cacheCreation;
        }

        public Integer cacheReadInputTokens() {
            return cacheRead;
        }

        public Integer cacheCreationInputTokens() {
            return cacheCreation;
        }
    }

    @Test
    @DisplayName("OpenAI's cached tokens are the cached part of its input count")
    void openAiCachedTokensAreInsideTheInput() {
        OpenAiTokenUsage usage = OpenAiTokenUsage.builder()
                .inputTokenCount(100)
                .inputTokensDetails(OpenAiTokenUsage.InputTokensDetails.builder()
                        .cachedTokens(60)
                        .build())
                .outputTokenCount(20)
                .totalTokenCount(120)
                .build();

        assertThat(ReportedUsage.of(usage, 1, 1)).isEqualTo(new TokenUsage(40, 60, 0, 20));
    }

    @Test
    @DisplayName(
            "Gemini's cached content is inside its input count; its thinking tokens, in the total only, are output")
    void geminiCachedContentIsInsideTheInputAndThoughtsAreOutput() {
        GoogleAiGeminiTokenUsage usage = GoogleAiGeminiTokenUsage.builder()
                .inputTokenCount(100)
                .cachedContentTokenCount(60)
                .outputTokenCount(20)
                .thoughtsTokenCount(30)
                .totalTokenCount(150)
                .build();

        assertThat(ReportedUsage.of(usage, 1, 1)).isEqualTo(new TokenUsage(40, 60, 0, 50));
    }

    @Test
    @DisplayName("OpenAI's usage without details is fresh input and output")
    void openAiWithoutDetailsIsFreshInput() {
        OpenAiTokenUsage usage = OpenAiTokenUsage.builder()
                .inputTokenCount(11)
                .outputTokenCount(7)
                .build();

        assertThat(ReportedUsage.of(usage, 1, 1)).isEqualTo(TokenUsage.of(11, 7));
    }

    @Test
    @DisplayName("Anthropic's cache reads and writes are apart from its input count")
    void anthropicCacheFiguresAreApart() {
        assertThat(ReportedUsage.of(new AnthropicLikeUsage(100, 20, 300, 50), 1, 1))
                .isEqualTo(new TokenUsage(100, 300, 50, 20));
        assertThat(ReportedUsage.of(new AnthropicLikeUsage(100, 20, null, null), 1, 1))
                .isEqualTo(TokenUsage.of(100, 20));
    }

    @Test
    @DisplayName("a total above the parts is output; a part left out falls back to the counted one")
    void totalsAndMissingParts() {
        assertThat(ReportedUsage.of(new dev.langchain4j.model.output.TokenUsage(10, 5, 40), 1, 1))
                .isEqualTo(TokenUsage.of(10, 30));
        assertThat(ReportedUsage.of(new dev.langchain4j.model.output.TokenUsage(null, 5), 9, 1))
                .isEqualTo(TokenUsage.of(9, 5));
        assertThat(ReportedUsage.of(new dev.langchain4j.model.output.TokenUsage(), 9, 4))
                .isEqualTo(TokenUsage.of(9, 4));
    }
}
