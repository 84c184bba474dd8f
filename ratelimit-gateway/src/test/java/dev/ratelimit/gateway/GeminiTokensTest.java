package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.mock.MockModel;
import dev.ratelimit.gateway.protocol.gemini.GeminiTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The Gemini prompt estimate ({@link GeminiTokens}) against the mock model's count ({@link
 * MockModel#GEMINI_PARTS}, a token per four characters: the stand-in for Gemini's tokenizer, which jtokkit does
 * not have) on the test corpus: the 126 paragraphs of English prose of {@code
 * claude-token-counts.jsonl} (this project's docs, CONTRIBUTING.md and the Apache License), each
 * sent as one user content, plus texts the quarter of characters undercounts.
 */
class GeminiTokensTest {

    private final GeminiTokens tokens = new GeminiTokens();

    private static JsonNode prompt(String text) {
        ObjectNode body = OpenAi.JSON.createObjectNode();
        body.putArray("contents")
                .addObject()
                .put("role", "user")
                .putArray("parts")
                .addObject()
                .put("text", text);
        return body;
    }

    @Test
    @DisplayName("English prose: never below the mock's count, over-reserving it by 6.4% in sum")
    void overReservationOnEnglish() throws Exception {
        long mock = 0;
        long estimate = 0;
        double most = 0;
        List<AnthropicTokensTest.Paragraph> paragraphs = AnthropicTokensTest.paragraphs();
        for (AnthropicTokensTest.Paragraph paragraph : paragraphs) {
            JsonNode body = prompt(paragraph.text());
            long counted = tokens.prompt(body);
            long reference = MockModel.GEMINI_PARTS.prompt(body);
            assertThat(counted).as("the estimate of: %s", paragraph.text()).isGreaterThanOrEqualTo(reference);
            mock += reference;
            estimate += counted;
            most = Math.max(most, (double) counted / reference);
        }
        double over = (double) estimate / mock - 1;
        System.out.printf(
                "Gemini estimate on %d paragraphs of English: %d tokens for the mock's %d: +%.1f%% in sum,"
                        + " each paragraph at most +%.1f%%%n",
                paragraphs.size(), estimate, mock, 100 * over, 100 * (most - 1));
        assertThat(paragraphs).hasSize(126);
        assertThat(over).isBetween(0.064, 0.065); // the figure docs/gateway.md states
    }

    @Test
    @DisplayName("every kind of prompt: the estimate is never below the mock's count")
    void neverBelowTheMock() throws Exception {
        List<String> texts = new ArrayList<>();
        texts.add("def f(x):\n" + "    ".repeat(40) + "return x\n" + " ".repeat(500));
        texts.add("東京は日本の首都です。人口は約千四百万人で、世界最大の都市圏の一つです。");
        texts.add("Ünïcödé façade naïve — “quotes” and emoji 🚀🚀🚀 and math ∑∫√ and Ελληνικά και Русский текст");
        texts.add("{\"a\":[1,2,3],\"b\":{\"c\":null}}".repeat(30));
        texts.add("0123456789".repeat(50));
        texts.add("a");
        for (String text : texts) {
            assertThat(tokens.prompt(prompt(text)))
                    .as(text)
                    .isGreaterThanOrEqualTo(MockModel.GEMINI_PARTS.prompt(prompt(text)));
        }
        JsonNode parts = OpenAi.JSON.readTree("""
                {"systemInstruction":{"parts":[{"text":"You are terse."}]},
                 "tools":[{"functionDeclarations":[{"name":"weather","description":"Weather by city",
                   "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}],
                 "contents":[
                   {"role":"user","parts":[{"text":"Weather in Paris?"},
                     {"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
                   {"role":"model","parts":[{"functionCall":{"name":"weather","args":{"city":"Paris"}}}]},
                   {"role":"user","parts":[{"functionResponse":{"name":"weather",
                     "response":{"temperature":18,"sky":"light rain"}}}]}]}
                """);
        assertThat(tokens.prompt(parts)).isGreaterThanOrEqualTo(MockModel.GEMINI_PARTS.prompt(parts));
        assertThat(tokens.prompt(parts)).isGreaterThan(GeminiTokens.MEDIA);
    }
}
