package dev.ratelimit.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The header values every front writes. */
class HeaderValuesTest {

    @Test
    @DisplayName("durations in Go's notation, as OpenAI's reset headers write them, to the millisecond")
    void goDuration() {
        assertThat(HeaderValues.goDuration(Duration.ofMillis(12))).isEqualTo("12ms");
        assertThat(HeaderValues.goDuration(Duration.ZERO)).isEqualTo("0ms");
        assertThat(HeaderValues.goDuration(Duration.ofMillis(-5))).isEqualTo("0ms");
        assertThat(HeaderValues.goDuration(Duration.ofSeconds(1))).isEqualTo("1s");
        assertThat(HeaderValues.goDuration(Duration.ofMillis(1_500))).isEqualTo("1.5s");
        assertThat(HeaderValues.goDuration(Duration.ofMillis(59_743))).isEqualTo("59.743s");
        assertThat(HeaderValues.goDuration(Duration.ofMinutes(6))).isEqualTo("6m0s");
        assertThat(HeaderValues.goDuration(Duration.ofSeconds(3_723))).isEqualTo("1h2m3s");
        assertThat(HeaderValues.goDuration(Duration.ofHours(1).plusMillis(50))).isEqualTo("1h0m0.05s");
        assertThat(HeaderValues.goDuration(Duration.ofMillis(1_005))).isEqualTo("1.005s");
        assertThat(HeaderValues.goDuration(Duration.ofMillis(2_705))).isEqualTo("2.705s");
        assertThat(HeaderValues.goDuration(Duration.ofMillis(2_740))).isEqualTo("2.74s");
    }

    @Test
    @DisplayName("RateLimit-Policy lists windows shortest first, ties in their given order; RateLimit items")
    void policyAndItems() {
        List<Window> windows = List.of(
                new Window("day", 100, Duration.ofDays(1)),
                new Window("minute", 5, Duration.ofMinutes(1)),
                Window.tokens("tokens-minute", 20_000, Duration.ofMinutes(1)));
        assertThat(HeaderValues.policy(windows))
                .isEqualTo("\"minute\";q=5;w=60, \"tokens-minute\";q=20000;w=60, \"day\";q=100;w=86400");
        assertThat(HeaderValues.rateLimitItem("minute", 4, 55)).isEqualTo("\"minute\";r=4;t=55");
    }

    @Test
    @DisplayName("names are kept to printable ASCII: quoted and escaped as structured fields, or as plain tokens")
    void escaping() {
        assertThat(HeaderValues.sfString("a\"b\\c\u00e9\n")).isEqualTo("\"a\\\"b\\\\c__\"");
        assertThat(HeaderValues.token("per minute\u00e9")).isEqualTo("per minute_");
    }

    @Test
    @DisplayName("retry-after-ms rounds up to the millisecond, at least 1")
    void retryAfterMillis() {
        assertThat(RetryAfter.millis(Duration.ofMillis(44_500))).isEqualTo(44_500);
        assertThat(RetryAfter.millis(Duration.ofNanos(1_000_001))).isEqualTo(2);
        assertThat(RetryAfter.millis(Duration.ZERO)).isEqualTo(1);
    }
}
