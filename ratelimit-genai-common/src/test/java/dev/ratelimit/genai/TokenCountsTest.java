package dev.ratelimit.genai;

import static org.assertj.core.api.Assertions.assertThat;

import com.knuddels.jtokkit.api.EncodingType;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The one token-count policy: which counting a model's name picks, and what each rule counts. */
class TokenCountsTest {

    private static final String PROSE = "The quick brown fox jumps over the lazy dog, twice.";

    @Test
    @DisplayName(
            "OpenAI's current families count with o200k_base, older models with their own, the rest with cl100k_base")
    void encodings() {
        for (String model : new String[] {
            "gpt-4o",
            "GPT-4o-mini",
            "openai/gpt-4.1",
            "gpt-4.5-preview",
            "gpt-5",
            "chatgpt-4o-latest",
            "o1",
            "o3-mini",
            "o4-mini"
        }) {
            assertThat(TokenCounts.encodingFor(model).getName()).as(model).isEqualTo(EncodingType.O200K_BASE.getName());
        }
        assertThat(TokenCounts.encodingFor("gpt-3.5-turbo").getName()).isEqualTo(EncodingType.CL100K_BASE.getName());
        assertThat(TokenCounts.encodingFor("text-davinci-003").getName()).isEqualTo(EncodingType.P50K_BASE.getName());
        for (String model : new String[] {"llama-3.1-70b", "mistral-large", "", "o", "omni"}) {
            assertThat(TokenCounts.encodingFor(model).getName())
                    .as(model)
                    .isEqualTo(EncodingType.CL100K_BASE.getName());
        }
        assertThat(TokenCounts.encodingFor(null).getName()).isEqualTo(EncodingType.CL100K_BASE.getName());
    }

    @Test
    @DisplayName("an OpenAI or unknown model counts its encoding's tokens exactly")
    void exact() {
        TokenCounts gpt = TokenCounts.forModel("gpt-4o");
        assertThat(gpt.count(PROSE)).isEqualTo(gpt.encoding().countTokensOrdinary(PROSE));
        TokenCounts unknown = TokenCounts.forModel("llama-3.1-70b");
        assertThat(unknown.count(PROSE)).isEqualTo(unknown.encoding().countTokensOrdinary(PROSE));
        assertThat(gpt.count(null)).isZero();
        assertThat(gpt.count("")).isZero();
        assertThat(gpt.count("<|endoftext|>"))
                .as("a special token's spelling is text")
                .isPositive();
    }

    @Test
    @DisplayName("Claude by name or protocol: max(1.5 x cl100k tokens, code points / 3), rounded up")
    void claude() {
        assertThat(TokenCounts.forModel("claude-sonnet-4-5")).isSameAs(TokenCounts.claude());
        assertThat(TokenCounts.forModel("anthropic/Claude-3-haiku")).isSameAs(TokenCounts.claude());
        long bpe = TokenCounts.claude().encoding().countTokensOrdinary(PROSE);
        long codePoints = PROSE.codePointCount(0, PROSE.length());
        assertThat(TokenCounts.claude().count(PROSE)).isEqualTo(Math.max((bpe * 3 + 1) / 2, (codePoints + 2) / 3));
        String spaces = " ".repeat(90); // packs into few tokens: the characters decide
        assertThat(TokenCounts.claude().count(spaces)).isEqualTo(30);
    }

    @Test
    @DisplayName("Gemini by name or protocol: max(cl100k tokens, code points / 4), rounded up")
    void gemini() {
        assertThat(TokenCounts.forModel("gemini-2.5-flash")).isSameAs(TokenCounts.gemini());
        assertThat(TokenCounts.forModel("models/gemma-3-27b-it")).isSameAs(TokenCounts.gemini());
        long bpe = TokenCounts.gemini().encoding().countTokensOrdinary(PROSE);
        long codePoints = PROSE.codePointCount(0, PROSE.length());
        assertThat(TokenCounts.gemini().count(PROSE)).isEqualTo(Math.max(bpe, (codePoints + 3) / 4));
        assertThat(TokenCounts.gemini().count(" ".repeat(90))).isEqualTo(23);
    }

    @Test
    @DisplayName(
            "for English prose the default counts at least what o200k_base counts: an unknown model errs toward reserving more")
    void defaultErrsTowardMore() {
        TokenCounts unknown = TokenCounts.forModel("some-model");
        TokenCounts gpt4o = TokenCounts.forModel("gpt-4o");
        String text = PROSE.repeat(20) + " Rate limits keep tenants within their budgets.";
        assertThat(unknown.count(text)).isGreaterThanOrEqualTo(gpt4o.count(text));
        assertThat(unknown.toString()).contains("cl100k_base");
        assertThat(TokenCounts.claude().toString()).contains("claude");
    }
}
