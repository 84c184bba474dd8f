package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The gateway over HTTP in front of its mock model: identity, bad input, headers and its own endpoints. */
class GatewayServerTest extends MockGatewayTest {

    static final String HELLO = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";

    @Test
    @DisplayName("a missing, malformed (Basic) or unknown key gets OpenAI's 401 invalid_api_key, charged nothing")
    void unauthorized() throws Exception {
        HttpResponse<String> missing = harness.chat(null, HELLO);
        HttpResponse<String> basic = harness.http.send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create(harness.base() + "/v1/chat/completions"))
                        .header("Authorization", "Basic ZGVtbzpkZW1v")
                        .header("Content-Type", "application/json")
                        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(HELLO))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> unknown = harness.chat("demo-platinum", HELLO);
        HttpResponse<String> models = harness.get("/v1/models", "sk-nope");

        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(missing.body()).contains("\"code\":\"invalid_api_key\"");
        assertThat(basic.statusCode()).isEqualTo(401);
        assertThat(basic.body()).contains("\"code\":\"invalid_api_key\"");
        assertThat(unknown.statusCode()).isEqualTo(401);
        assertThat(unknown.body())
                .startsWith("{\"error\":{\"message\":\"Incorrect API key provided.\"")
                .contains("\"type\":\"invalid_request_error\"", "\"code\":\"invalid_api_key\"")
                .doesNotContain("demo-platinum");
        assertThat(unknown.headers().firstValue("x-ratelimit-limit-requests")).isEmpty();
        assertThat(models.statusCode()).isEqualTo(401);
        assertThat(harness.metric("ratelimit_decisions_total")).isZero();
    }

    @Test
    @DisplayName(
            "the mock model honours max_tokens and max_completion_tokens: the reply stops there, finish_reason length")
    void mockHonoursMaxTokens() throws Exception {
        for (String limit : List.of("\"max_tokens\":3", "\"max_completion_tokens\":3")) {
            HttpResponse<String> answer = harness.chat(
                    "demo-free",
                    "{\"model\":\"gpt-4o-mini\"," + limit
                            + ",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long story\"}]}");
            assertThat(answer.statusCode()).isEqualTo(200);
            com.fasterxml.jackson.databind.JsonNode body = OpenAi.JSON.readTree(answer.body());
            assertThat(body.path("usage").path("completion_tokens").asLong())
                    .as("output tokens with %s", limit)
                    .isBetween(1L, 3L);
            assertThat(body.path("choices").path(0).path("finish_reason").asText())
                    .isEqualTo("length");
        }
    }

    @Test
    @DisplayName("/metrics carries the JVM's meters: memory, GC, threads, classes, CPU, uptime")
    void jvmMeters() throws Exception {
        String metrics = harness.admin("/metrics").body();
        assertThat(metrics)
                .contains(
                        "jvm_memory_used_bytes",
                        "jvm_gc_",
                        "jvm_threads_live_threads",
                        "jvm_classes_loaded_classes",
                        "process_cpu_usage",
                        "process_uptime_seconds");
    }

    @Test
    @DisplayName("bad input gets a 4xx in OpenAI's error shape, never a 500, and is never charged")
    void badInput() throws Exception {
        List<String> bodies = List.of(
                "not json",
                "{",
                "[]",
                "{\"a\":1} trailing",
                "{\"model\":\"m\",\"model\":\"n\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "{\"model\":\"gpt-4o-mini\"}",
                "{\"model\":\"gpt-4o-mini\",\"messages\":[]}",
                "{\"model\":\"gpt-4o-mini\",\"messages\":\"hi\"}",
                "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"content\":\"x\"}]}",
                "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":7}]}",
                "{\"model\":7,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "{\"model\":\"gpt-4o-mini\",\"stream\":\"yes\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "{\"model\":\"gpt-4o-mini\",\"max_tokens\":-1,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "{\"model\":\"gpt-4o-mini\",\"max_completion_tokens\":1.5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
                "{\"model\":\"gpt-4o-mini\",\"stream_options\":3,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}");
        for (String body : bodies) {
            HttpResponse<String> response = harness.chat("demo-free", body);
            assertThat(response.statusCode()).as(body).isEqualTo(400);
            assertThat(response.body())
                    .as(body)
                    .startsWith("{\"error\":{\"message\":")
                    .contains("\"type\":\"invalid_request_error\"");
        }
        assertThat(harness.chat("demo-free", HELLO.replace("\"model\":\"gpt-4o-mini\",", ""))
                        .body())
                .contains("\"param\":\"model\"", "\"code\":\"missing_required_parameter\"");
        assertThat(harness.post("/v1/embeddings", "demo-free", "application/json", "{\"model\":\"m\"}")
                        .body())
                .contains("\"param\":\"input\"");

        HttpResponse<String> form = harness.post("/v1/chat/completions", "demo-free", "text/plain", HELLO);
        assertThat(form.statusCode()).isEqualTo(415);
        assertThat(form.body()).contains("\"code\":\"unsupported_content_type\"");

        String large = HELLO.replace("Hello", "x".repeat(200_000));
        for (int i = 0; i < 5; i++) { // a client still sending its body reads the 413, on a fresh or reused connection
            assertThat(harness.chat("demo-free", large).statusCode()).isEqualTo(413);
            HttpResponse<String> chunked = harness.http.send(
                    HttpRequest.newBuilder(URI.create(harness.base() + "/v1/chat/completions"))
                            .header("Authorization", "Bearer demo-free")
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofInputStream( // no Content-Length: chunked
                                    () -> new ByteArrayInputStream(large.getBytes(StandardCharsets.UTF_8))))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(chunked.statusCode()).as("a chunked body over the limit").isEqualTo(413);
            assertThat(chunked.body()).contains("\"code\":\"request_too_large\"");
        }

        HttpResponse<String> get = harness.get("/v1/chat/completions", "demo-free");
        assertThat(get.statusCode())
                .as("stored completions are neither metered nor relayed")
                .isEqualTo(404);
        assertThat(get.body()).contains("\"code\":\"unknown_url\"");

        assertThat(harness.metric("ratelimit_decisions_total"))
                .as("no decision was taken")
                .isZero();
        assertThat(harness.settlements("committed", "completed") + harness.settlements("cancelled", "upstream_error"))
                .isZero();
        HttpResponse<String> good = harness.chat("demo-free", HELLO);
        assertThat(good.statusCode()).isEqualTo(200);
        assertThat(good.headers().firstValue("x-ratelimit-remaining-requests")).contains("4");
    }

    @Test
    @DisplayName("every metered response carries both header families, streamed ones before the first chunk")
    void headers() throws Exception {
        HttpResponse<String> plain = harness.chat("demo-pro", HELLO);
        HttpResponse<String> stream = harness.chat("demo-pro", HELLO.replace("{", "{\"stream\":true,"));

        for (HttpResponse<String> response : List.of(plain, stream)) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("x-ratelimit-limit-requests"))
                    .contains("60");
            assertThat(response.headers().firstValue("x-ratelimit-reset-requests"))
                    .contains("1m0s");
            assertThat(response.headers().firstValue("RateLimit-Policy"))
                    .contains("\"minute\";q=60;w=60, \"tokens-minute\";q=200000;w=60, \"day\";q=5000;w=86400,"
                            + " \"tokens-day\";q=5000000;w=86400");
            assertThat(response.headers().firstValue("x-ratelimit-limit-tokens"))
                    .contains("200000");
            assertThat(response.headers().firstValue("Retry-After")).isEmpty();
        }
        assertThat(plain.headers().firstValue("x-ratelimit-remaining-requests")).contains("59");
        long estimate = new TokenCounter()
                        .chatPrompt("gpt-4o-mini", OpenAi.JSON.readTree(HELLO).get("messages"))
                + 1024;
        assertThat(plain.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(Long.toString(200_000 - estimate));
        assertThat(plain.headers().firstValue("RateLimit"))
                .contains("\"minute\";r=59;t=60, \"tokens-minute\";r=" + (200_000 - estimate) + ";t=60");
        assertThat(stream.headers().firstValue("x-ratelimit-remaining-requests"))
                .contains("58");
        assertThat(stream.body()).endsWith("data: [DONE]\n\n");
    }

    @Test
    @DisplayName(
            "a 429 by the minute keeps the requests family; the tokens family is left out, the day's tokens unknown")
    void rejectionLeavesUnknownFamiliesOut() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(harness.chat("demo-free", HELLO).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> sixth = harness.chat("demo-free", HELLO);
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(sixth.headers().firstValue("x-ratelimit-window")).contains("minute");
        assertThat(sixth.headers().firstValue("x-ratelimit-remaining-requests")).contains("0");
        for (String header :
                List.of("x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens")) {
            assertThat(sixth.headers().firstValue(header))
                    .as("%s: the minute's tokens are known, the day's (not evaluated) could be tighter", header)
                    .isEmpty();
        }
        assertThat(sixth.headers().firstValue("RateLimit")).contains("\"minute\";r=0;t=60");
    }

    @Test
    @DisplayName("other /v1 paths: the library's RateLimitFilter charges request windows; the 6th gets OpenAI's 429")
    void passThrough() throws Exception {
        String large = "x".repeat(5_000);
        HttpResponse<String> oversized =
                harness.post("/v1/moderations", "demo-free", "application/octet-stream", large);
        assertThat(oversized.statusCode()).isEqualTo(413);
        assertThat(oversized.body()).contains("\"code\":\"request_too_large\"");
        assertThat(harness.metric("ratelimit_decisions_total"))
                .as("a body over the limit is refused before anything is charged")
                .isZero();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> models = harness.get("/v1/models", "demo-free");
            assertThat(models.statusCode()).isEqualTo(200);
            assertThat(models.body()).contains("\"object\":\"list\"");
            assertThat(models.headers().firstValue("x-ratelimit-remaining-requests"))
                    .contains(Long.toString(4 - i));
            assertThat(models.headers().firstValue("x-ratelimit-limit-tokens"))
                    .as("no tokens are charged here")
                    .isEmpty();
        }
        harness.clock.advance(Duration.ofSeconds(20));

        HttpResponse<String> sixth = harness.get("/v1/models", "demo-free");

        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(sixth.headers().firstValue("Retry-After")).contains("40");
        assertThat(sixth.headers().firstValue("retry-after-ms")).contains("40000");
        assertThat(sixth.headers().firstValue("x-ratelimit-reset-requests")).contains("40s");
        assertThat(sixth.headers().firstValue("RateLimit")).contains("\"minute\";r=0;t=40");
        assertThat(sixth.headers().firstValue("RateLimit-Policy"))
                .as("the windows these paths are charged to")
                .contains("\"minute\";q=5;w=60, \"day\";q=100;w=86400");
        assertThat(sixth.headers().firstValue("X-RateLimit-Limit")).isEmpty();
        assertThat(sixth.body())
                .startsWith("{\"error\":{\"message\":\"Too many requests: the limit of 5 requests per minute")
                .contains("\"type\":\"requests\"", "\"code\":\"rate_limit_exceeded\"", "\"window\":\"minute\"");
        // the filter completes the response before the count, so a fast client may read the metric first
        Harness.await("the refusal is counted", () -> refusals(harness) == 1);
        assertThat(harness.chat("demo-free", HELLO).statusCode())
                .as("the pass-through calls spent the same minute window")
                .isEqualTo(429);
        assertThat(harness.get("/v1/nothing-here", "demo-pro").statusCode()).isEqualTo(404);
    }

    @Test
    @DisplayName("status page, status JSON, health and metrics are served without a key and never limited")
    void infoEndpoints() throws Exception {
        harness.chat("demo-free", HELLO);
        harness.chat("demo-free", HELLO);
        for (int i = 0; i < 7; i++) {
            assertThat(harness.admin("/").statusCode()).isEqualTo(200);
            assertThat(harness.get("/health", null).statusCode()).isEqualTo(200);
        }

        HttpResponse<String> page = harness.admin("/");
        assertThat(page.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("text/html"));
        assertThat(page.body()).contains("<title>ratelimit gateway</title>", "/status.json");
        assertThat(page.headers().firstValue("x-ratelimit-limit-requests")).isEmpty();
        var status = OpenAi.JSON.readTree(harness.admin("/status.json").body());
        assertThat(status.path("upstream").asText()).isEqualTo("built-in mock model");
        var free = status.path("tenants").get(0);
        assertThat(free.path("tenant").asText()).isEqualTo("demo-user-free");
        assertThat(free.path("maxConcurrent").asInt()).isEqualTo(2);
        assertThat(free.path("inFlight").asInt()).isZero();
        assertThat(free.path("windows").get(0).path("name").asText()).isEqualTo("minute");
        assertThat(free.path("windows").get(0).path("used").asLong()).isEqualTo(2);
        assertThat(free.path("windows").get(0).path("limit").asLong()).isEqualTo(5);
        assertThat(status.path("models").findValuesAsText("model")).contains("gpt-4o-mini");
        String kind = store == Harness.Store.REDIS ? "redis" : "in-memory";
        assertThat(harness.get("/health", null).body())
                .isEqualTo("{\"status\":\"UP\",\"store\":{\"kind\":\"" + kind + "\",\"status\":\"UP\"},"
                        + "\"slots\":{\"kind\":\"" + kind + "\",\"status\":\"UP\"},\"failOpen\":true,"
                        + "\"limiter\":\"enabled\"}");
        assertThat(harness.get("/health/live", null).statusCode()).isEqualTo(200);
        assertThat(harness.get("/health/ready", null).body()).isEqualTo("{\"status\":\"UP\"}");
        assertThat(harness.admin("/metrics").body())
                .contains("ratelimit_decisions_total{limiter=\"gateway\",outcome=\"allowed\",tier=\"free\","
                        + "window=\"minute\"} 2.0")
                .contains("ratelimit_fail_open{limiter=\"gateway\"} 0.0")
                .contains("gateway_settlements_total{ending=\"completed\",outcome=\"committed\"} 2.0");
        HttpResponse<String> unknown = harness.get("/nope", null);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("\"code\":\"unknown_url\"");
    }

    @Test
    @DisplayName("RATE_LIMIT_DISABLED=true: the kill switch lets every request through, no slot taken")
    void killSwitch() throws Exception {
        harness.close();
        harness = Harness.start(store, false, Map.of("RATE_LIMIT_DISABLED", "true"));
        for (int i = 0; i < 10; i++) {
            assertThat(harness.chat("demo-free", HELLO).statusCode()).isEqualTo(200);
        }
        assertThat(harness.admin("/metrics").body()).contains("ratelimit_disabled{limiter=\"gateway\"} 1.0");
        assertThat(harness.admin("/status.json").body()).contains("DISABLED");
    }

    private static double refusals(Harness harness) {
        try {
            return harness.metric("gateway_refusals_total", "endpoint", "other", "status", "429");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
