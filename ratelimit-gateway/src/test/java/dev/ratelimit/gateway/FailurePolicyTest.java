package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three gateways on one Redis that is stopped, each window with its own failure policy: the request
 * window marked {@code fail-local} admits each gateway's share (9 a minute over {@code
 * limits.expected-instances: 3}, so 3 each and 9 in all), the token window that fails open passes
 * unchecked and is named in {@code X-RateLimit-Degraded} and the access log, and a budget in money
 * (closed by default) refuses with 503.
 */
class FailurePolicyTest {

    private static final int INSTANCES = 3;
    private static final int LIMIT = 9;
    private static final String UNPRICED =
            "{\"model\":\"gpt-4o-mini\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String PRICED =
            "{\"model\":\"gpt-4o\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path directory;

    @Test
    @DisplayName("store down, 3 gateways: fail-local admits 3 each and 9 in all, fail-open is named, money 503")
    void policiesPerWindow() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-alice, tenant: alice, tier: team }
                  - { key: k-bob, tenant: bob, tier: paying }
                tiers:
                  team:
                    max-concurrent: 100
                    windows: { minute: 9/1m fail-local, tokens-minute: 100000 tokens/1m }
                  paying:
                    max-concurrent: 100
                    windows: { minute: 100/1m, spend-day: $5/1d@1m }
                prices:
                  gpt-4o: { input: 2.50, cached-input: 1.25, output: 10.00 }
                limits:
                  fail-open: true
                  expected-instances: %d
                """.formatted(INSTANCES));
        List<Harness> gateways = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try (RedisServer redis = RedisServer.start()) {
            for (int i = 0; i < INSTANCES; i++) {
                Path log = directory.resolve("access-" + i + ".log");
                logs.add(log);
                gateways.add(Harness.start(
                        Harness.Store.MEMORY,
                        false,
                        Map.of(
                                "REDIS_URL",
                                redis.uri(),
                                "GATEWAY_CONFIG",
                                config.toString(),
                                "ACCESS_LOG",
                                log.toString())));
            }
            redis.stop();

            int total = 0;
            for (Harness gateway : gateways) {
                int admitted = 0;
                for (int call = 0; call < LIMIT; call++) {
                    HttpResponse<String> response = gateway.chat("k-alice", UNPRICED);
                    if (response.statusCode() == 200) {
                        admitted++;
                        assertThat(response.headers().firstValue("X-RateLimit-Degraded"))
                                .as("the window that failed open, by name")
                                .contains("tokens-minute");
                    } else {
                        assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
                        assertThat(response.headers().firstValue("Retry-After")).isPresent();
                    }
                }
                assertThat(admitted).as("this gateway's share: 9 / 3").isEqualTo(LIMIT / INSTANCES);
                total += admitted;

                HttpResponse<String> money = gateway.chat("k-bob", PRICED);
                assertThat(money.statusCode()).as(money.body()).isEqualTo(503);
                assertThat(money.body()).contains("rate_limiter_unavailable");
            }
            assertThat(total)
                    .as("three gateways together, never more than the limit")
                    .isEqualTo(LIMIT);

            Harness.await("the access log's lines", () -> lines(logs.get(0)).size() == LIMIT + 1);
            JsonNode first = lines(logs.get(0)).get(0);
            assertThat(first.path("status").asInt()).isEqualTo(200);
            assertThat(first.path("degraded").toString()).isEqualTo("[\"tokens-minute\"]");
        } finally {
            for (Harness gateway : gateways) {
                gateway.close();
            }
        }
    }

    private static List<JsonNode> lines(Path log) {
        List<JsonNode> lines = new ArrayList<>();
        try {
            if (!Files.exists(log)) {
                return lines;
            }
            for (String line : Files.readAllLines(log)) {
                if (!line.isBlank()) {
                    lines.add(OpenAi.JSON.readTree(line));
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return lines;
    }
}
