package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.redis.RedisServer;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With Redis down and the gateway failing open: a request whose reservation holds a budget in money
 * is refused with 503, one of requests and tokens alone passes degraded.
 */
class MoneyFailsClosedTest {

    @TempDir
    Path directory;

    @Test
    @DisplayName("Redis down, fail-open: a priced model's call gets 503, requests and tokens alone pass degraded")
    void moneyNeverFailsOpen() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-alice, tenant: alice, tier: pro }
                  - { key: k-bob, tenant: bob, tier: basic }
                tiers:
                  basic:
                    max-concurrent: 10
                    windows: { minute: 100/1m, tokens-minute: 100000 tokens/1m }
                  pro:
                    max-concurrent: 10
                    windows: { minute: 100/1m, spend-day: $5/1d@1m }
                prices:
                  gpt-4o: { input: 2.50, cached-input: 1.25, output: 10.00 }
                limits:
                  fail-open: true
                """);
        try (RedisServer redis = RedisServer.start();
                Harness harness = Harness.start(
                        Harness.Store.MEMORY,
                        false,
                        Map.of("REDIS_URL", redis.uri(), "GATEWAY_CONFIG", config.toString()))) {
            String priced =
                    "{\"model\":\"gpt-4o\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            String unpriced =
                    "{\"model\":\"gpt-4o-mini\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            assertThat(harness.chat("k-alice", priced).statusCode()).isEqualTo(200);
            redis.stop();
            HttpResponse<String> refused = harness.chat("k-alice", priced);
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
            assertThat(refused.body()).contains("rate_limiter_unavailable");
            HttpResponse<String> passed = harness.chat("k-bob", unpriced);
            assertThat(passed.statusCode()).as(passed.body()).isEqualTo(200);
            assertThat(passed.headers().firstValue("X-RateLimit-Degraded")).contains("minute, tokens-minute");
        }
    }
}
