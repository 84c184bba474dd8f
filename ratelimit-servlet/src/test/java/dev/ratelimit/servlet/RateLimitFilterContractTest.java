package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.testkit.MutableClock;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The HTTP contract of the filter, over a real Jetty and a real client, on the in-memory store. */
class RateLimitFilterContractTest {

    private static final String FREE_POLICY = "\"minute\";q=5;w=60, \"day\";q=100;w=86400";
    private static final Map<String, TestServer.Account> ACCOUNTS = Map.of(
            "alice-key", new TestServer.Account("alice", "free"),
            "bob-key", new TestServer.Account("bob", "free"),
            "petra-key", new TestServer.Account("petra", "pro"),
            "olga-key", new TestServer.Account("olga", "platinum"),
            "tina-key", new TestServer.Account("tina", "tiny"));

    private final MutableClock clock = MutableClock.at(Instant.parse("2026-03-01T12:00:00Z"));
    private final CountingStore store = new CountingStore();
    private TestServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private TestServer start(RateLimitFilter filter) throws Exception {
        server = TestServer.start(filter, ACCOUNTS);
        return server;
    }

    private RateLimiter limiter() {
        return SlidingWindowRateLimiter.builder(store).clock(clock).build();
    }

    private HttpResponse<String> as(String key) throws Exception {
        return server.get("/v1/chat", "Authorization", "Bearer " + key);
    }

    private static Optional<String> header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name);
    }

    @Nested
    @DisplayName("allowed requests")
    class Allowed {

        @Test
        @DisplayName("a free user's first request: limit 5, remaining 4, window minute, draft headers, no Retry-After")
        void firstRequest() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));

            HttpResponse<String> response = as("alice-key");

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("{\"ok\":true}");
            assertThat(header(response, "X-RateLimit-Limit")).contains("5");
            assertThat(header(response, "X-RateLimit-Remaining")).contains("4");
            assertThat(header(response, "X-RateLimit-Window")).contains("minute");
            assertThat(header(response, "RateLimit-Policy")).contains(FREE_POLICY);
            assertThat(header(response, "RateLimit")).contains("\"minute\";r=4;t=60");
            assertThat(header(response, "Retry-After")).isEmpty();
            assertThat(header(response, "X-RateLimit-Degraded")).isEmpty();
            assertThat(server.appHits).hasValue(1);
        }

        @Test
        @DisplayName("remaining counts down 4..0 with one store call per request, never a Retry-After")
        void countsDown() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));

            for (int expected = 4; expected >= 0; expected--) {
                HttpResponse<String> response = as("alice-key");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(header(response, "X-RateLimit-Remaining")).contains(Integer.toString(expected));
                assertThat(header(response, "RateLimit")).contains("\"minute\";r=" + expected + ";t=60");
                assertThat(header(response, "Retry-After")).isEmpty();
            }
            assertThat(store.calls).hasValue(5);
        }

        @Test
        @DisplayName("the pro tier gets its own limits and policy")
        void proTier() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));

            HttpResponse<String> response = as("petra-key");

            assertThat(header(response, "X-RateLimit-Limit")).contains("60");
            assertThat(header(response, "X-RateLimit-Remaining")).contains("59");
            assertThat(header(response, "RateLimit-Policy")).contains("\"minute\";q=60;w=60, \"day\";q=5000;w=86400");
        }

        @Test
        @DisplayName("an unknown tier name gets the default tier")
        void unknownTier() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));

            HttpResponse<String> response = as("olga-key");

            assertThat(header(response, "X-RateLimit-Limit")).contains("5");
            assertThat(header(response, "RateLimit-Policy")).contains(FREE_POLICY);
        }
    }

    @Nested
    @DisplayName("429")
    class Rejected {

        @Test
        @DisplayName("the 6th request in a minute: 429, honest Retry-After equal to t, headers and JSON body")
        void sixthRequest() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));
            as("alice-key");
            clock.advance(Duration.ofSeconds(10));
            for (int i = 0; i < 4; i++) {
                as("alice-key");
            }
            clock.advance(Duration.ofSeconds(5));

            HttpResponse<String> response = as("alice-key");

            assertThat(response.statusCode()).isEqualTo(429);
            assertThat(header(response, "Retry-After")).contains("45");
            assertThat(header(response, "X-RateLimit-Limit")).contains("5");
            assertThat(header(response, "X-RateLimit-Remaining")).contains("0");
            assertThat(header(response, "X-RateLimit-Window")).contains("minute");
            assertThat(header(response, "RateLimit-Policy")).contains(FREE_POLICY);
            assertThat(header(response, "RateLimit")).contains("\"minute\";r=0;t=45");
            assertThat(header(response, "Content-Type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
            assertThat(response.body())
                    .isEqualTo("{\"error\":\"rate_limited\",\"window\":\"minute\",\"limit\":5,"
                            + "\"retry_after_seconds\":45,\"message\":\"Too many requests: the limit of 5 requests"
                            + " per minute (window 'minute') is used up; retry in 45 seconds.\"}");
            assertThat(server.appHits)
                    .as("a rejected request never reaches the application")
                    .hasValue(5);
            assertThat(store.calls).hasValue(6);
        }

        @Test
        @DisplayName("Retry-After is honest: at that moment the request passes, just before it does not")
        void retryAfterIsHonest() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));
            as("alice-key");
            clock.advance(Duration.ofSeconds(10));
            for (int i = 0; i < 4; i++) {
                as("alice-key");
            }
            HttpResponse<String> rejected = as("alice-key");
            long retryAfter = Long.parseLong(header(rejected, "Retry-After").orElseThrow());
            assertThat(retryAfter).isEqualTo(50);

            clock.advance(Duration.ofSeconds(retryAfter).minusMillis(1));
            HttpResponse<String> early = as("alice-key");
            assertThat(early.statusCode()).isEqualTo(429);
            assertThat(header(early, "Retry-After")).contains("1");
            assertThat(header(early, "RateLimit")).contains("\"minute\";r=0;t=1");

            clock.advanceMillis(1);
            HttpResponse<String> onTime = as("alice-key");
            assertThat(onTime.statusCode()).isEqualTo(200);
            assertThat(header(onTime, "X-RateLimit-Remaining")).contains("0");
            assertThat(header(onTime, "Retry-After")).isEmpty();
        }

        @Test
        @DisplayName("a longer window that trips is named, with its own limit and retry")
        void longerWindowTrips() throws Exception {
            Tier tiny = Tier.of(
                    "tiny", new Window("hour", 3, Duration.ofHours(1)), new Window("minute", 2, Duration.ofMinutes(1)));
            TierPolicy policy = TierPolicy.builder()
                    .tier(tiny)
                    .tier(TierPolicy.defaults().resolve("free"))
                    .build();
            start(new RateLimitFilter(limiter(), policy));
            as("tina-key");
            as("tina-key");
            clock.advance(Duration.ofSeconds(61));
            HttpResponse<String> third = as("tina-key");
            assertThat(third.statusCode()).isEqualTo(200);
            assertThat(header(third, "X-RateLimit-Window"))
                    .as("the window with the least remaining")
                    .contains("hour");
            assertThat(header(third, "X-RateLimit-Remaining")).contains("0");

            HttpResponse<String> fourth = as("tina-key");

            assertThat(fourth.statusCode()).isEqualTo(429);
            assertThat(header(fourth, "X-RateLimit-Window")).contains("hour");
            assertThat(header(fourth, "X-RateLimit-Limit")).contains("3");
            assertThat(header(fourth, "Retry-After")).contains(Long.toString(3_600 - 61));
            assertThat(header(fourth, "RateLimit")).contains("\"hour\";r=0;t=" + (3_600 - 61));
            assertThat(header(fourth, "RateLimit-Policy"))
                    .as("shortest first")
                    .contains("\"minute\";q=2;w=60, \"hour\";q=3;w=3600");
            assertThat(fourth.body()).contains("\"window\":\"hour\",\"limit\":3,\"retry_after_seconds\":3539");
        }

        @Test
        @DisplayName("users do not share a budget")
        void usersAreSeparate() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));
            for (int i = 0; i < 6; i++) {
                as("alice-key");
            }

            HttpResponse<String> bob = as("bob-key");

            assertThat(bob.statusCode()).isEqualTo(200);
            assertThat(header(bob, "X-RateLimit-Remaining")).contains("4");
        }
    }

    @Nested
    @DisplayName("options")
    class Options {

        @Test
        @DisplayName("both header families off: only Retry-After on a 429")
        void headersOff() throws Exception {
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .header(HeaderFamily.X_RATELIMIT, false)
                    .header(HeaderFamily.IETF, false)
                    .build());
            HttpResponse<String> first = as("alice-key");
            for (int i = 0; i < 4; i++) {
                as("alice-key");
            }
            HttpResponse<String> rejected = as("alice-key");

            for (HttpResponse<String> response : java.util.List.of(first, rejected)) {
                assertThat(response.headers().map().keySet())
                        .noneMatch(name -> name.toLowerCase(java.util.Locale.ROOT)
                                        .startsWith("x-ratelimit")
                                || name.toLowerCase(java.util.Locale.ROOT).startsWith("ratelimit"));
            }
            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(header(rejected, "Retry-After")).contains("60");
        }

        @Test
        @DisplayName("only the draft family: RateLimit headers without X-RateLimit-*")
        void draftOnly() throws Exception {
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .header(HeaderFamily.X_RATELIMIT, false)
                    .build());

            HttpResponse<String> response = as("alice-key");

            assertThat(header(response, "X-RateLimit-Limit")).isEmpty();
            assertThat(header(response, "RateLimit")).contains("\"minute\";r=4;t=60");
        }

        @Test
        @DisplayName("the OpenAI header family, when switched on: limit, remaining and a Go-style reset duration")
        void openAiHeaders() throws Exception {
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .header(HeaderFamily.OPENAI, true)
                    .build());
            HttpResponse<String> first = as("alice-key");
            assertThat(header(first, "x-ratelimit-limit-requests")).contains("5");
            assertThat(header(first, "x-ratelimit-remaining-requests")).contains("4");
            assertThat(header(first, "x-ratelimit-reset-requests")).contains("1m0s");
            clock.advanceMillis(15_500);
            for (int i = 0; i < 4; i++) {
                as("alice-key");
            }
            HttpResponse<String> rejected = as("alice-key");
            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(header(rejected, "x-ratelimit-remaining-requests")).contains("0");
            assertThat(header(rejected, "x-ratelimit-reset-requests")).contains("44.5s");
            assertThat(header(rejected, "retry-after-ms"))
                    .as("the exact delay, which OpenAI's SDKs read before Retry-After")
                    .contains("44500");
            assertThat(header(rejected, "Retry-After")).contains("45");
            assertThat(header(first, "retry-after-ms"))
                    .as("never on an allowed request")
                    .isEmpty();
        }

        @Test
        @DisplayName(
                "Anthropic's header family, when switched on: limit, remaining and a reset time of the clock given")
        void anthropicHeaders() throws Exception {
            assertThatThrownBy(() -> RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                            .header(HeaderFamily.ANTHROPIC, true)
                            .build())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("clock");
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .header(HeaderFamily.ANTHROPIC, true)
                    .clock(clock)
                    .build());
            HttpResponse<String> first = as("alice-key");
            assertThat(header(first, "anthropic-ratelimit-requests-limit")).contains("5");
            assertThat(header(first, "anthropic-ratelimit-requests-remaining")).contains("4");
            assertThat(header(first, "anthropic-ratelimit-requests-reset"))
                    .as("a minute from the clock's now")
                    .contains(clock.instant().plusSeconds(60).toString());
            assertThat(header(first, "X-RateLimit-Limit"))
                    .as("the defaults stay on")
                    .contains("5");
        }

        @Test
        @DisplayName("OpenAI's error body, when switched on: a 429 says type, code and the window that tripped")
        void openAiErrors() throws Exception {
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .openAiErrors(true)
                    .build());
            HttpResponse<String> last = null;
            for (int i = 0; i < 6; i++) {
                last = as("alice-key");
            }

            assertThat(last.statusCode()).isEqualTo(429);
            assertThat(header(last, "Retry-After"))
                    .as("status and headers stay")
                    .contains("60");
            assertThat(last.body())
                    .isEqualTo("{\"error\":{\"message\":\"Too many requests: the limit of 5 requests per minute"
                            + " (window 'minute') is used up; retry in 60 seconds.\",\"type\":\"requests\","
                            + "\"param\":null,\"code\":\"rate_limit_exceeded\",\"window\":\"minute\"}}");
        }

        @Test
        @DisplayName("a token window overrun by a settled reservation refuses the next request: type tokens")
        void openAiErrorsForTokens() throws Exception {
            Tier tiny = Tier.of("tiny", Window.of(5, Duration.ofMinutes(1)), Window.tokens(100, Duration.ofMinutes(1)));
            RateLimiter limiter = limiter();
            start(RateLimitFilter.builder(
                            limiter,
                            TierPolicy.builder()
                                    .tier(tiny)
                                    .tier(TierPolicy.defaults().resolve("free"))
                                    .build())
                    .openAiErrors(true)
                    .build());
            limiter.reserve("tina", tiny, 50).commit(130).toCompletableFuture().join();

            HttpResponse<String> rejected = as("tina-key");

            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(header(rejected, "X-RateLimit-Window")).contains("tokens-minute");
            assertThat(rejected.body())
                    .contains("the limit of 100 tokens per minute (window 'tokens-minute')")
                    .contains("\"type\":\"tokens\"", "\"window\":\"tokens-minute\"");
        }

        @Test
        @DisplayName("without the switch, no OpenAI headers")
        void noOpenAiHeadersByDefault() throws Exception {
            start(new RateLimitFilter(limiter(), TierPolicy.defaults()));
            assertThat(header(as("alice-key"), "x-ratelimit-limit-requests")).isEmpty();
        }

        @Test
        @DisplayName("CORS preflights (OPTIONS) are neither checked nor counted by default; exemptMethods() checks all")
        void preflightsAreExempt() throws Exception {
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults()).build());
            HttpRequest preflight = HttpRequest.newBuilder(
                            server.request("/v1/chat").uri())
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                    .header("Authorization", "Bearer alice-key")
                    .build();
            for (int i = 0; i < 10; i++) {
                HttpResponse<String> response = server.client().send(preflight, HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(header(response, "X-RateLimit-Limit")).isEmpty();
            }
            assertThat(store.calls).hasValue(0);
            assertThat(header(as("alice-key"), "X-RateLimit-Remaining")).contains("4");
            server.close();

            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .exemptMethods()
                    .build());
            HttpRequest checkedPreflight = HttpRequest.newBuilder(
                            server.request("/v1/chat").uri())
                    .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                    .header("Authorization", "Bearer alice-key")
                    .build();
            HttpResponse<String> counted = server.client().send(checkedPreflight, HttpResponse.BodyHandlers.ofString());
            assertThat(header(counted, "X-RateLimit-Remaining")).contains("3");
        }

        @Test
        @DisplayName("shadow mode: would-be rejections proceed without back-off headers, and are counted as rejected")
        void shadowMode() throws Exception {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            start(RateLimitFilter.builder(
                            SlidingWindowRateLimiter.builder(store)
                                    .clock(clock)
                                    .metrics(MicrometerLimiterMetrics.of(registry))
                                    .build(),
                            TierPolicy.defaults())
                    .enforce(false)
                    .build());
            for (int i = 0; i < 5; i++) {
                assertThat(as("alice-key").statusCode()).isEqualTo(200);
            }
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> wouldBeRejected = as("alice-key");
                assertThat(wouldBeRejected.statusCode()).isEqualTo(200);
                assertThat(header(wouldBeRejected, "Retry-After")).isEmpty();
                assertThat(header(wouldBeRejected, "X-RateLimit-Remaining")).isEmpty();
            }
            assertThat(registry.get("ratelimit.decisions")
                            .tag("outcome", "rejected")
                            .counter()
                            .count())
                    .isEqualTo(3.0);
        }

        @Test
        @DisplayName("exempt paths are neither checked nor counted; similar paths are")
        void exemptions() throws Exception {
            start(RateLimitFilter.builder(limiter(), TierPolicy.defaults())
                    .exemptPaths("/health", "/internal/*")
                    .build());

            for (int i = 0; i < 10; i++) {
                assertThat(server.get("/health", "Authorization", "Bearer alice-key")
                                .statusCode())
                        .isEqualTo(200);
                assertThat(server.get("/internal/metrics/x").statusCode()).isEqualTo(200);
                assertThat(server.get("/internal").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> health = server.get("/health");
            assertThat(header(health, "X-RateLimit-Limit")).isEmpty();
            assertThat(store.calls).hasValue(0);

            HttpResponse<String> healthz = server.get("/healthz", "Authorization", "Bearer alice-key");
            HttpResponse<String> internals = server.get("/internals", "Authorization", "Bearer alice-key");
            HttpResponse<String> sneaky = server.get("/health/../v1/chat", "Authorization", "Bearer alice-key");
            assertThat(header(healthz, "X-RateLimit-Remaining")).contains("4");
            assertThat(header(internals, "X-RateLimit-Remaining")).contains("3");
            assertThat(header(sneaky, "X-RateLimit-Remaining")).contains("2");
            assertThat(store.calls).hasValue(3);
        }
    }

    @Nested
    @DisplayName("store failures")
    class Failures {

        private final CircuitBreakerConfig neverOpens = CircuitBreakerConfig.custom()
                .slidingWindowSize(1_000)
                .minimumNumberOfCalls(1_000)
                .build();

        private RateLimiter failingClosed() {
            return SlidingWindowRateLimiter.builder(store)
                    .clock(clock)
                    .failOpen(false)
                    .circuitBreaker(neverOpens)
                    .build();
        }

        @Test
        @DisplayName("fail-open: requests pass, marked degraded, without remaining counts or Retry-After")
        void failOpen() throws Exception {
            store.failing = true;
            start(new RateLimitFilter(
                    SlidingWindowRateLimiter.builder(store)
                            .clock(clock)
                            .circuitBreaker(neverOpens)
                            .build(),
                    TierPolicy.defaults()));

            for (int i = 0; i < 8; i++) {
                HttpResponse<String> response = as("alice-key");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(header(response, "X-RateLimit-Degraded")).contains("minute, day");
                assertThat(header(response, "X-RateLimit-Remaining")).isEmpty();
                assertThat(header(response, "RateLimit")).isEmpty();
                assertThat(header(response, "RateLimit-Policy")).contains(FREE_POLICY);
                assertThat(header(response, "Retry-After")).isEmpty();
            }
            store.failing = false;
            HttpResponse<String> healthy = as("alice-key");
            assertThat(header(healthy, "X-RateLimit-Degraded")).isEmpty();
            assertThat(header(healthy, "X-RateLimit-Remaining")).contains("4");
        }

        @Test
        @DisplayName("fail-closed: 503 with Retry-After and a JSON body, never a 500, then normal again")
        void failClosed() throws Exception {
            store.failing = true;
            start(RateLimitFilter.builder(failingClosed(), TierPolicy.defaults())
                    .unavailableRetryAfter(Duration.ofMillis(2_500))
                    .build());

            HttpResponse<String> response = as("alice-key");

            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(header(response, "Retry-After")).contains("3");
            assertThat(header(response, "Content-Type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
            assertThat(response.body())
                    .startsWith("{\"error\":\"rate_limiter_unavailable\",\"retry_after_seconds\":3,\"message\":");
            assertThat(header(response, "RateLimit-Policy")).contains(FREE_POLICY);
            assertThat(server.appHits).hasValue(0);
            server.close();
            start(RateLimitFilter.builder(failingClosed(), TierPolicy.defaults())
                    .openAiErrors(true)
                    .build());
            HttpResponse<String> openAi = as("alice-key");
            assertThat(openAi.statusCode()).isEqualTo(503);
            assertThat(header(openAi, "Retry-After")).contains("5");
            assertThat(openAi.body())
                    .as("OpenAI's error shape, when switched on")
                    .isEqualTo("{\"error\":{\"message\":\"The rate limiter cannot reach its store and refuses requests"
                            + " until it can; retry in 5 seconds.\",\"type\":\"server_error\",\"param\":null,"
                            + "\"code\":\"rate_limiter_unavailable\"}}");

            store.failing = false;
            HttpResponse<String> healthy = as("alice-key");
            assertThat(healthy.statusCode()).isEqualTo(200);
            assertThat(header(healthy, "X-RateLimit-Remaining")).contains("4");
        }

        @Test
        @DisplayName("fail-closed with the default breaker: once open it refuses without calling the store")
        void openBreakerAnswers503WithoutStoreCalls() throws Exception {
            store.failing = true;
            start(new RateLimitFilter(
                    SlidingWindowRateLimiter.builder(store)
                            .clock(clock)
                            .failOpen(false)
                            .build(),
                    TierPolicy.defaults()));

            for (int i = 0; i < 20; i++) {
                HttpResponse<String> response = as("alice-key");
                assertThat(response.statusCode()).isEqualTo(503);
                assertThat(header(response, "Retry-After")).contains("5");
            }
            assertThat(store.calls.get()).isLessThan(20);
        }
    }
}
