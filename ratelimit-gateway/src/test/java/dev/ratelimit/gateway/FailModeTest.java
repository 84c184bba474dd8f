package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code limits.fail-open} end to end, on a real redis-server that stops: {@code false} refuses
 * every limited request with OpenAI's 503 until the store is back, {@code true} lets them through,
 * marked degraded.
 */
class FailModeTest {

    private static final String HELLO =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path dir;

    /** What a request sees while Redis is down, with the test config's {@code limits.fail-open} set. */
    private void whileStoreIsDown(boolean failOpen, Outage outage) throws Exception {
        Path config = dir.resolve("gateway.yaml");
        Files.writeString(
                config, Files.readString(Harness.testConfig()).stripTrailing() + "\n  fail-open: " + failOpen + "\n");
        try (Harness harness = Harness.start(Harness.Store.REDIS, false, Map.of("GATEWAY_CONFIG", config.toString()))) {
            assertThat(harness.chat("demo-free", HELLO).statusCode()).isEqualTo(200);
            Harness.redis().stop();
            try {
                outage.check(harness, harness.chat("demo-free", HELLO));
            } finally {
                Harness.redis().restart();
            }
        }
    }

    /** Assertions on a gateway whose store is down. */
    @FunctionalInterface
    private interface Outage {
        void check(Harness harness, HttpResponse<String> response) throws Exception;
    }

    @Test
    @DisplayName("fail-open: false, store down: 503 in OpenAI's shape with Retry-After, metered and pass-through alike")
    void failClosed() throws Exception {
        whileStoreIsDown(false, (harness, refused) -> {
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.headers().firstValue("Retry-After")).contains("5");
            assertThat(refused.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
            assertThat(refused.body())
                    .isEqualTo("{\"error\":{\"message\":\"The rate limiter cannot reach its store and refuses"
                            + " requests until it can; retry in 5 seconds.\",\"type\":\"server_error\","
                            + "\"param\":null,\"code\":\"rate_limiter_unavailable\"}}");
            assertThat(refused.headers().firstValue("X-RateLimit-Degraded")).isEmpty();
            assertThat(harness.metric("gateway_refusals_total", "endpoint", "chat", "status", "503"))
                    .isEqualTo(1);

            HttpResponse<String> models = harness.get("/v1/models", "demo-free");
            assertThat(models.statusCode()).isEqualTo(503);
            assertThat(models.headers().firstValue("Retry-After")).contains("5");
            assertThat(models.body()).contains("\"code\":\"rate_limiter_unavailable\"");
            assertThat(harness.settlements("committed", "completed"))
                    .as("only the request before the outage reached the model")
                    .isEqualTo(1);
        });
    }

    @Test
    @DisplayName("fail-open: true, store down: requests are allowed, marked degraded")
    void failOpen() throws Exception {
        whileStoreIsDown(true, (harness, allowed) -> {
            assertThat(allowed.statusCode()).isEqualTo(200);
            assertThat(allowed.headers().firstValue("X-RateLimit-Degraded"))
                    .as("every window, the tenant's and the provider cap's, passed unchecked")
                    .contains("minute, tokens-minute, day, tokens-day, rpm, tpm");
            assertThat(allowed.headers().firstValue("Retry-After")).isEmpty();
        });
    }
}
