package dev.ratelimit.genai;

import static org.assertj.core.api.Assertions.assertThat;

import com.knuddels.jtokkit.api.Encoding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A stream's text counted as it passes equals the whole text counted at once, however the stream
 * cuts it: the count a broken stream is settled with, without keeping its text.
 */
class StreamedTokensTest {

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
        // the project's own prose and code blocks, paragraph by paragraph
        for (String doc : List.of("README.md", "CONTRIBUTING.md", "docs/library.md", "docs/gateway.md")) {
            for (String paragraph : read(doc).split("\n\n")) {
                if (!paragraph.isBlank()) {
                    texts.add(paragraph);
                }
            }
        }
        return texts;
    }

    private static String read(String doc) throws IOException {
        return Files.readString(Path.of("..").resolve(doc));
    }

    @Test
    @DisplayName("counted as it passes, cut anywhere, each text counts what it counts whole, in every counting")
    void equalsTheWhole() throws Exception {
        Random random = new Random(29);
        List<String> texts = texts();
        for (String model : List.of("gpt-4o-mini", "gpt-3.5-turbo", "claude-sonnet-4-5", "gemini-2.5-flash")) {
            TokenCounts counts = TokenCounts.forModel(model);
            Encoding encoding = counts.encoding();
            for (String text : texts) {
                for (int round = 0; round < 20; round++) {
                    StreamedTokens count = counts.stream();
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
                    assertThat(count.count()).isEqualTo(counts.count(text));
                }
            }
        }
    }

    @Test
    @DisplayName("a delta per word, as models stream: what is held at any time is the last word, not the answer")
    void holdsTheLastWord() {
        TokenCounts counts = TokenCounts.forModel("gpt-4o");
        Encoding encoding = counts.encoding();
        StreamedTokens count = counts.stream();
        StringBuilder whole = new StringBuilder();
        for (int i = 0; i < 20_000; i++) {
            String delta = i % 10 == 9 ? ".\n" : " word" + i;
            count.append(delta);
            whole.append(delta);
            assertThat(count.held()).isLessThanOrEqualTo(delta.length() + 16);
        }
        assertThat(count.tokens()).isEqualTo(encoding.countTokensOrdinary(whole.toString()));
        assertThat(count.isEmpty()).isFalse();
        assertThat(counts.stream().isEmpty()).isTrue();
        assertThat(counts.stream().count()).isZero();
        assertThat(TokenCounts.claude().stream().count()).isZero();
    }

    @Test
    @DisplayName("a run without a place to cut is counted in parts of at most MAX_HELD: a token or so more, never less")
    void longRun() {
        TokenCounts counts = TokenCounts.forModel("gpt-4o");
        Encoding encoding = counts.encoding();
        String text = "x".repeat(5_000) + " then words after a very long run";
        StreamedTokens count = counts.stream();
        for (int at = 0; at < text.length(); at += 7) {
            count.append(text.substring(at, Math.min(text.length(), at + 7)));
            assertThat(count.held()).isLessThanOrEqualTo(StreamedTokens.MAX_HELD + 7);
        }
        long whole = encoding.countTokensOrdinary(text);
        assertThat(count.tokens()).isBetween(whole, whole + 2);
    }
}
