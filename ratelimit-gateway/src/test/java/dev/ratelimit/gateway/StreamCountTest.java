package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.knuddels.jtokkit.api.Encoding;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A stream's text counted as it passes equals the whole text counted at once, however the stream
 * cuts it: the count {@link SseRelay}'s watchers settle a broken stream with, without keeping its
 * text.
 */
class StreamCountTest {

    private final TokenCounter tokens = new TokenCounter();

    /** Texts of every shape a model streams: prose, code, lists, numbers, contractions, CJK, emoji. */
    private static List<String> texts() throws Exception {
        List<String> texts = new ArrayList<>(List.of(
                "Hello, world! It's a fine day; isn't it? We'll see: they've said I'd go.",
                "The quick brown fox jumps over the lazy dog 1234567 times, costing $12.50 (approx.).",
                "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))  # 3\n\tindented\r\nwindows line\n",
                "- item one\n- item two\n  - nested: \"quoted\" and 'single'\n\n1. first\n2. second",
                "{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Zürich\",\"unit\":\"celsius\"}}",
                "日本語のテキスト、句読点。中文文本，标点符号！한국어 텍스트입니다. Mixed 混合 text.",
                "Emoji 😀 and 👍🏽 with café, naïve, coöperate, e\u0301 combining; Ωμέγα; Привет, мир!",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbb",
                "   leading spaces,  double  spaces,\n\n\nmany newlines \n \n trailing   ",
                "HTTPServer parseJSON getHTTPResponseCode iPhone McDonald's O'Neil DON'T WE'LL",
                "URL: https://example.com/a/b?c=d&e=f#g — em dash – en dash … ellipsis «quotes» ‘curly’ “double”"));
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(
                StreamCountTest.class.getResourceAsStream("claude-token-counts.jsonl"), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                JsonNode entry = OpenAi.JSON.readTree(line);
                texts.add(entry.path("text").asText());
            }
        }
        return texts;
    }

    @Test
    @DisplayName("counted as it passes, cut anywhere, each text counts what it counts whole, in both encodings")
    void equalsTheWhole() throws Exception {
        Random random = new Random(29);
        List<String> texts = texts();
        for (String model : List.of("gpt-4o-mini", "gpt-3.5-turbo")) {
            Encoding encoding = tokens.encodingFor(model);
            for (String text : texts) {
                for (int round = 0; round < 20; round++) {
                    StreamCount count = new StreamCount(encoding);
                    int at = 0;
                    while (at < text.length()) {
                        int next = Math.min(text.length(), at + 1 + random.nextInt(round < 10 ? 6 : 40));
                        if (Character.isHighSurrogate(text.charAt(next - 1)) && next < text.length()) {
                            next++; // a delta is whole characters
                        }
                        count.append(text.substring(at, next));
                        at = next;
                    }
                    assertThat(count.tokens())
                            .as("%s, round %d: %s", model, round, text.length() > 60 ? text.substring(0, 60) : text)
                            .isEqualTo(encoding.countTokensOrdinary(text));
                    assertThat(count.codePoints()).isEqualTo(text.codePointCount(0, text.length()));
                }
            }
        }
    }

    @Test
    @DisplayName("a delta per word, as models stream: what is held at any time is the last word, not the answer")
    void holdsTheLastWord() {
        Encoding encoding = tokens.encodingFor("gpt-4o");
        StreamCount count = new StreamCount(encoding);
        StringBuilder whole = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            String delta = i % 10 == 9 ? ".\n" : " word" + i;
            count.append(delta);
            whole.append(delta);
            assertThat(count.held()).isLessThanOrEqualTo(delta.length() + 16);
        }
        assertThat(count.tokens()).isEqualTo(encoding.countTokensOrdinary(whole.toString()));
        assertThat(count.isEmpty()).isFalse();
        assertThat(new StreamCount(encoding).isEmpty()).isTrue();
        assertThat(new StreamCount(encoding).tokens()).isZero();
    }

    @Test
    @DisplayName("a run without a place to cut is counted in parts of at most MAX_HELD: a token or so more, never less")
    void longRun() {
        Encoding encoding = tokens.encodingFor("gpt-4o");
        String text = "x".repeat(5_000) + " then words after a very long run";
        StreamCount count = new StreamCount(encoding);
        for (int at = 0; at < text.length(); at += 7) {
            count.append(text.substring(at, Math.min(text.length(), at + 7)));
            assertThat(count.held()).isLessThanOrEqualTo(StreamCount.MAX_HELD + 7);
        }
        long whole = encoding.countTokensOrdinary(text);
        assertThat(count.tokens()).isBetween(whole, whole + 2);
    }
}
