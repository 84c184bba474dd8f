package dev.ratelimit.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The headers and refusals every front writes, on decisions made by hand. */
class RateLimitResponsesTest {

    private static final Window MINUTE = new Window("minute", 5, Duration.ofMinutes(1));
    private static final Window DAY = new Window("day", 100, Duration.ofDays(1));
    private static final Window TOKENS = Window.tokens("tokens-minute", 1_000, Duration.ofMinutes(1));
    private static final Tier TIER = Tier.of("t", MINUTE, DAY, TOKENS);
    private static final String POLICY = "\"minute\";q=5;w=60, \"tokens-minute\";q=1000;w=60, \"day\";q=100;w=86400";

    private static final RateLimitResponses EACH_UNIT = RateLimitResponses.builder()
            .header(HeaderFamily.X_RATELIMIT, false)
            .header(HeaderFamily.OPENAI, true)
            .openAiErrors(true)
            .eachUnit(true)
            .build();

    private final Map<String, String> headers = new LinkedHashMap<>();

    private static Decision.Usage usage(Window window, long used, long resetSeconds) {
        return new Decision.Usage(window, null, used, Duration.ofSeconds(resetSeconds));
    }

    private static Decision rejection(Window window, Duration retryAfter, List<Decision.Usage> usage) {
        return new Decision(false, window.limit(), 0, retryAfter, window, retryAfter, false, null, false, usage);
    }

    @Test
    @DisplayName(
            "Anthropic's family: requests, tokens, input and output tokens, resets as RFC 3339 times, retry-after-ms")
    void anthropicFamily() {
        RateLimitResponses anthropic = RateLimitResponses.builder()
                .header(HeaderFamily.X_RATELIMIT, false)
                .header(HeaderFamily.IETF, false)
                .header(HeaderFamily.ANTHROPIC, true)
                .eachUnit(true)
                .clock(Clock.fixed(Instant.parse("2030-01-01T00:00:00.250Z"), ZoneOffset.UTC))
                .build();
        Decision decision = rejection(
                TOKENS,
                Duration.ofMillis(9_500),
                List.of(usage(MINUTE, 2, 30), usage(DAY, 2, 3_600), usage(TOKENS, 1_000, 10)));

        Refusal refusal = anthropic.rejected(TIER, decision, headers::put);

        assertThat(refusal.status()).isEqualTo(429);
        assertThat(headers)
                .containsEntry("anthropic-ratelimit-requests-limit", "5")
                .containsEntry("anthropic-ratelimit-requests-remaining", "3")
                .containsEntry("anthropic-ratelimit-requests-reset", "2030-01-01T00:00:31Z")
                .containsEntry("anthropic-ratelimit-tokens-limit", "1000")
                .containsEntry("anthropic-ratelimit-tokens-remaining", "0")
                .containsEntry("anthropic-ratelimit-input-tokens-remaining", "0")
                .containsEntry("anthropic-ratelimit-output-tokens-limit", "1000")
                .containsEntry("anthropic-ratelimit-output-tokens-reset", "2030-01-01T00:00:11Z")
                .containsEntry("Retry-After", "10")
                .containsEntry("retry-after-ms", "9500")
                .doesNotContainKeys("x-ratelimit-window", "x-ratelimit-limit-requests", "RateLimit");
        assertThat(RateLimitResponses.resetTime(Instant.parse("2030-01-01T00:00:00Z"), Duration.ofSeconds(5)))
                .isEqualTo("2030-01-01T00:00:05Z");
        assertThatThrownBy(() -> RateLimitResponses.builder()
                        .header(HeaderFamily.ANTHROPIC, true)
                        .build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("clock");
    }

    @Test
    @DisplayName("a window the rejection did not evaluate is unknown: its unit is left out, the policy keeps it")
    void unevaluatedWindowsAreUnknown() {
        // the minute rejected; the day and the token window were never evaluated
        Decision decision = rejection(MINUTE, Duration.ofMillis(41_500), List.of(usage(MINUTE, 5, 42)));

        Refusal refusal = EACH_UNIT.rejected(TIER, decision, headers::put);

        assertThat(refusal.status()).isEqualTo(429);
        assertThat(headers)
                .containsEntry("RateLimit-Policy", POLICY)
                .containsEntry("RateLimit", "\"minute\";r=0;t=42")
                .containsEntry("x-ratelimit-limit-requests", "5")
                .containsEntry("x-ratelimit-remaining-requests", "0")
                .containsEntry("Retry-After", "42")
                .containsEntry("retry-after-ms", "41500")
                .containsEntry("x-ratelimit-window", "minute")
                .doesNotContainKeys("x-ratelimit-remaining-tokens", "x-ratelimit-limit-tokens", "X-RateLimit-Limit");
        assertThat(refusal.body())
                .isEqualTo("{\"error\":{\"message\":\"Too many requests: the limit of 5 requests per minute (window"
                        + " 'minute') is used up; retry in 42 seconds.\",\"type\":\"requests\",\"param\":null,"
                        + "\"code\":\"rate_limit_exceeded\",\"window\":\"minute\"}}");
    }

    @Test
    @DisplayName("a token rejection reports its own unit; requests, with the day unknown, are left out")
    void partlyKnownUnitIsLeftOut() {
        Decision decision =
                rejection(TOKENS, Duration.ofSeconds(30), List.of(usage(MINUTE, 1, 60), usage(TOKENS, 900, 20)));

        EACH_UNIT.rejected(TIER, decision, "tokens used up", headers::put);

        assertThat(headers)
                .containsEntry("RateLimit", "\"tokens-minute\";r=100;t=20")
                .containsEntry("x-ratelimit-remaining-tokens", "100")
                .containsEntry("x-ratelimit-reset-tokens", "20s")
                .containsEntry("x-ratelimit-window", "tokens-minute")
                .doesNotContainKey("x-ratelimit-remaining-requests");
    }

    @Test
    @DisplayName("an allowed decision reports the tightest window of each unit, ties to the shortest")
    void eachUnitWhenAllowed() {
        Decision decision = new Decision(
                true,
                5,
                4,
                Duration.ZERO,
                MINUTE,
                Duration.ofSeconds(60),
                false,
                null,
                false,
                List.of(usage(MINUTE, 1, 60), usage(TOKENS, 10, 60), usage(DAY, 96, 3_000)));

        EACH_UNIT.allowed(TIER, decision, headers::put);

        assertThat(headers)
                .containsEntry("RateLimit", "\"minute\";r=4;t=60, \"tokens-minute\";r=990;t=60")
                .containsEntry("x-ratelimit-limit-requests", "5")
                .containsEntry("x-ratelimit-reset-requests", "1m0s")
                .containsEntry("x-ratelimit-limit-tokens", "1000")
                .doesNotContainKeys("Retry-After", "X-RateLimit-Degraded");
    }

    @Test
    @DisplayName("the deciding window by default; degraded claims no counts; plain bodies")
    void decidingWindowAndPlainBodies() {
        RateLimitResponses responses = RateLimitResponses.builder().build();
        responses.allowed(TIER, Decision.allow(DAY, 3, Duration.ofSeconds(10)), headers::put);
        assertThat(headers)
                .containsEntry("X-RateLimit-Limit", "100")
                .containsEntry("X-RateLimit-Remaining", "3")
                .containsEntry("X-RateLimit-Window", "day")
                .containsEntry("RateLimit", "\"day\";r=3;t=10");

        headers.clear();
        responses.allowed(TIER, Decision.degraded(MINUTE), headers::put);
        assertThat(headers).containsOnlyKeys("RateLimit-Policy", "X-RateLimit-Degraded");
        assertThat(headers).containsEntry("X-RateLimit-Degraded", "minute");

        headers.clear();
        responses.allowed(TIER, Decision.degraded(MINUTE, List.of(MINUTE, DAY)), headers::put);
        assertThat(headers)
                .as("every window not checked, by name")
                .containsEntry("X-RateLimit-Degraded", "minute, day");

        headers.clear();
        responses.allowed(TIER, Decision.degraded(MINUTE, List.of()), headers::put);
        assertThat(headers)
                .as("decided against the local share: nothing unchecked, no counts claimed")
                .containsOnlyKeys("RateLimit-Policy");

        headers.clear();
        Refusal rejected = responses.rejected(TIER, Decision.reject(MINUTE, Duration.ofSeconds(1)), headers::put);
        assertThat(rejected.body())
                .isEqualTo("{\"error\":\"rate_limited\",\"window\":\"minute\",\"limit\":5,\"retry_after_seconds\":1,"
                        + "\"message\":\"Too many requests: the limit of 5 requests per minute (window 'minute') is"
                        + " used up; retry in 1 second.\"}");
        assertThat(headers).containsEntry("RateLimit", "\"minute\";r=0;t=1").doesNotContainKey("retry-after-ms");
    }

    @Test
    @DisplayName("too large: 400 without a retry; concurrency: 429 naming 'concurrent'; unavailable: 503")
    void otherRefusals() {
        Decision tooLarge =
                new Decision(false, 1_000, 0, Duration.ZERO, TOKENS, Duration.ZERO, false, null, true, List.of());
        Refusal refusal = EACH_UNIT.rejected(TIER, tooLarge, headers::put);
        assertThat(refusal.status()).isEqualTo(400);
        assertThat(refusal.body()).contains("\"code\":\"request_too_large\"", "no retry can succeed");
        assertThat(headers).doesNotContainKeys("Retry-After", "x-ratelimit-window");

        headers.clear();
        Refusal concurrent = EACH_UNIT.concurrencyLimited(TIER, List.of(), 2, Duration.ofSeconds(1), headers::put);
        assertThat(concurrent.status()).isEqualTo(429);
        assertThat(concurrent.body()).contains("\"code\":\"concurrency_limit_exceeded\"", "2 requests in flight");
        assertThat(headers)
                .containsEntry("Retry-After", "1")
                .containsEntry("retry-after-ms", "1000")
                .containsEntry("x-ratelimit-window", "concurrent")
                .doesNotContainKey("RateLimit");

        headers.clear();
        Refusal unavailable = RateLimitResponses.builder()
                .unavailableRetryAfter(Duration.ofMillis(2_500))
                .build()
                .unavailable(TIER, headers::put);
        assertThat(unavailable.status()).isEqualTo(503);
        assertThat(headers).containsEntry("Retry-After", "3").containsEntry("RateLimit-Policy", POLICY);
    }

    @Test
    @DisplayName("Anthropic's error shape: every refusal's body is {type: error, error: {type, message}} with the"
            + " library's message")
    void anthropicBodies() {
        RateLimitResponses anthropic = RateLimitResponses.builder()
                .header(HeaderFamily.X_RATELIMIT, false)
                .errorShape(ErrorShape.ANTHROPIC)
                .build();
        Decision rejected = Decision.reject(MINUTE, Duration.ofSeconds(42));
        assertThat(anthropic.rejected(TIER, rejected, headers::put).body())
                .isEqualTo("{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":"
                        + "\"Too many requests: the limit of 5 requests per minute (window 'minute') is used up;"
                        + " retry in 42 seconds.\"}}");
        assertThat(RateLimitResponses.message(rejected))
                .isEqualTo("Too many requests: the limit of 5 requests per minute (window 'minute') is used up;"
                        + " retry in 42 seconds.");
        assertThat(anthropic
                        .concurrencyLimited(TIER, List.of(), 2, Duration.ofSeconds(1), headers::put)
                        .body())
                .startsWith("{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"")
                .contains("the limit of 2 requests in flight is reached; retry in 1 second.");
        Decision tooLarge =
                new Decision(false, 1_000, 0, Duration.ZERO, TOKENS, Duration.ZERO, false, null, true, List.of());
        Refusal large =
                anthropic.rejected(TIER, tooLarge, RateLimitResponses.message(tooLarge) + " More.", headers::put);
        assertThat(large.status()).isEqualTo(400);
        assertThat(large.body())
                .startsWith("{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\"")
                .endsWith("no retry can succeed. More.\"}}");
        Refusal unavailable = anthropic.unavailable(TIER, headers::put);
        assertThat(unavailable.status()).isEqualTo(503);
        assertThat(unavailable.body()).startsWith("{\"type\":\"error\",\"error\":{\"type\":\"api_error\"");
        assertThat(RateLimitResponses.builder()
                        .openAiErrors(true)
                        .openAiErrors(false)
                        .build()
                        .rejected(TIER, rejected, headers::put)
                        .body())
                .startsWith("{\"error\":\"rate_limited\"");
    }

    @Test
    @DisplayName("Google's error shape: code, status, a QuotaFailure naming window, level and limit, and a RetryInfo"
            + " to the millisecond")
    void geminiBodies() {
        RateLimitResponses gemini = RateLimitResponses.builder()
                .header(HeaderFamily.X_RATELIMIT, false)
                .errorShape(ErrorShape.GEMINI)
                .build();
        Decision rejected = Decision.reject(MINUTE, Duration.ofMillis(57_200));
        Refusal refusal = gemini.rejected(TIER, rejected, headers::put);
        assertThat(refusal.status()).isEqualTo(429);
        assertThat(refusal.body())
                .isEqualTo("{\"error\":{\"code\":429,\"message\":\"Too many requests: the limit of 5 requests per"
                        + " minute (window 'minute') is used up; retry in 58 seconds.\",\"status\":\"RESOURCE_EXHAUSTED\","
                        + "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\",\"violations\":"
                        + "[{\"quotaMetric\":\"ratelimit/requests\",\"quotaId\":\"minute\",\"quotaDimensions\":"
                        + "{\"window\":\"minute\",\"level\":\"caller\"},\"quotaValue\":\"5\"}]},"
                        + "{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"57.200s\"}]}}");
        assertThat(headers).containsEntry("Retry-After", "58").doesNotContainKey("retry-after-ms");
        assertThat(gemini.concurrencyLimited(TIER, List.of(), 2, Duration.ofSeconds(1), headers::put)
                        .body())
                .contains(
                        "\"status\":\"RESOURCE_EXHAUSTED\"", "\"quotaId\":\"concurrent\"", "\"retryDelay\":\"1.000s\"");
        Decision tooLarge =
                new Decision(false, 1_000, 0, Duration.ZERO, TOKENS, Duration.ZERO, false, null, true, List.of());
        Refusal large = gemini.rejected(TIER, tooLarge, "Too large.", headers::put);
        assertThat(large.status()).isEqualTo(400);
        assertThat(large.body())
                .isEqualTo("{\"error\":{\"code\":400,\"message\":\"Too large.\",\"status\":\"INVALID_ARGUMENT\"}}");
        Refusal unavailable = gemini.unavailable(TIER, headers::put);
        assertThat(unavailable.status()).isEqualTo(503);
        assertThat(unavailable.body()).contains("\"status\":\"UNAVAILABLE\"", "\"retryDelay\":\"5.000s\"");
    }

    @Test
    @DisplayName("a delay as protobuf's JSON duration: seconds and three decimals, rounded up to the millisecond")
    void protobufDuration() {
        assertThat(RetryAfter.protobufDuration(Duration.ofMillis(57_200))).isEqualTo("57.200s");
        assertThat(RetryAfter.protobufDuration(Duration.ofNanos(1_000_001))).isEqualTo("0.002s");
        assertThat(RetryAfter.protobufDuration(Duration.ofSeconds(3))).isEqualTo("3.000s");
        assertThat(RetryAfter.protobufDuration(Duration.ofSeconds(-1))).isEqualTo("0.001s");
    }

    @Test
    @DisplayName("a delay the front decides itself: Retry-After and retry-after-ms, both rounded up")
    void retryAfterWriter() {
        RetryAfter.write(Duration.ofMillis(1_200), headers::put);
        assertThat(headers).containsExactly(Map.entry("Retry-After", "2"), Map.entry("retry-after-ms", "1200"));
        headers.clear();
        RetryAfter.write(Duration.ofSeconds(-3), headers::put);
        assertThat(headers).containsExactly(Map.entry("Retry-After", "1"), Map.entry("retry-after-ms", "1"));
        assertThatThrownBy(() -> RetryAfter.write(Duration.ZERO, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("headers");
    }

    @Test
    @DisplayName("bad arguments are refused, naming them")
    void badArguments() {
        assertThatThrownBy(() -> EACH_UNIT.rejected(TIER, Decision.allow(MINUTE, 4, Duration.ZERO), headers::put))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("decision must be a rejection");
        assertThatThrownBy(() -> RateLimitResponses.builder().unavailableRetryAfter(Duration.ofMillis(999)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unavailableRetryAfter");
        assertThatThrownBy(() -> CallerKeys.authenticated(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("userId");
        assertThat(CallerKeys.authenticated("ip:10.0.0.5")).isEqualTo("\\ip:10.0.0.5");
        assertThat(RetryAfter.seconds(Duration.ofMillis(1))).isEqualTo(1);
        assertThatThrownBy(() -> RateLimitResponses.message(Decision.allow(MINUTE, 4, Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("decision must be a rejection");
        assertThatThrownBy(() -> RateLimitResponses.builder().errorShape(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("shape");
    }
}
