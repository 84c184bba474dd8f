package dev.ratelimit.genai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link TokenUsage}, {@link ModelPrice} and {@link PriceTable}: what a call costs, by model. */
class PricesTest {

    private static final ModelPrice GPT_4O = ModelPrice.perMillion("2.50", "1.25", "10.00");

    @Test
    void openAiUsageTakesTheCachedTokensOutOfThePrompt() {
        assertThat(TokenUsage.openAi(100, 60, 20)).isEqualTo(new TokenUsage(40, 60, 0, 20));
        assertThat(TokenUsage.openAi(100, 160, 20)).isEqualTo(new TokenUsage(0, 100, 0, 20));
        assertThat(TokenUsage.openAi(100, 60, 20).total()).isEqualTo(120);
        assertThat(new TokenUsage(1, 2, 3, 4).allInput()).isEqualTo(6);
        assertThatThrownBy(() -> TokenUsage.of(-1, 0)).hasMessageContaining("input");
    }

    @Test
    void aCostIsEachKindOfTokenAtItsPriceRoundedUpToAMicroDollar() {
        // $2.50 per million tokens is 2.5 micro-dollars a token
        assertThat(GPT_4O.costMicros(TokenUsage.of(11, 7))).isEqualTo(98); // 27.5 + 70, rounded up
        assertThat(GPT_4O.costMicros(TokenUsage.openAi(11, 4, 7))).isEqualTo(93); // 17.5 + 5 + 70
        assertThat(GPT_4O.withCacheWrite(new BigDecimal("3.75")).costMicros(new TokenUsage(0, 0, 4, 0)))
                .isEqualTo(15);
        assertThat(GPT_4O.costMicros(TokenUsage.of(0, 0))).isZero();
    }

    @Test
    void theWorstCaseIsThePromptAtTheDearestInputPriceAndTheMaximumOutput() {
        ModelPrice anthropic = ModelPrice.perMillion("3", "0.30", "15").withCacheWrite(new BigDecimal("3.75"));

        assertThat(GPT_4O.worstCaseMicros(10, 1_000)).isEqualTo(25 + 10_000);
        assertThat(anthropic.worstCaseMicros(4, 0)).isEqualTo(15); // 4 * 3.75: every token may be a cache write
        assertThatThrownBy(() -> new ModelPrice(BigDecimal.ONE, BigDecimal.ONE, BigDecimal.ONE, new BigDecimal("-1")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("output");
    }

    @Test
    void aTablePricesExactNamesFirstThenTheLongestPrefix() {
        Map<String, ModelPrice> prices = new LinkedHashMap<>();
        prices.put("claude-*", ModelPrice.perMillion("1", "1", "1"));
        prices.put("claude-sonnet-4-5*", ModelPrice.perMillion("3", "0.30", "15"));
        prices.put("claude-sonnet-4-5-20250929", ModelPrice.perMillion("9", "9", "9"));
        PriceTable table = PriceTable.of(prices);

        assertThat(table.priceOf("claude-sonnet-4-5-20250929")).isEqualTo(prices.get("claude-sonnet-4-5-20250929"));
        assertThat(table.priceOf("claude-sonnet-4-5-latest")).isEqualTo(prices.get("claude-sonnet-4-5*"));
        assertThat(table.priceOf("claude-haiku-4-5")).isEqualTo(prices.get("claude-*"));
        assertThat(table.priceOf("gpt-4o")).isNull();
        assertThat(table.prices()).containsOnlyKeys(prices.keySet());
        assertThatThrownBy(() -> PriceTable.of(Map.of("gpt-*-mini", GPT_4O)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'*' may only end a name");
        assertThatThrownBy(() -> PriceTable.of(Map.of(" ", GPT_4O))).isInstanceOf(IllegalArgumentException.class);
    }
}
