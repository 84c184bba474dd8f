package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Two gateways on one private redis-server share a Gemini tenant's budget exactly: calls released
 * at once on both are admitted exactly up to the tenant's request window, the rest refused in
 * Google's shape, and the token window holds exactly the admitted calls' {@code usageMetadata}.
 */
class GeminiSharedBudgetTest {

    private static final int LIMIT = 10;
    private static final int CALLS_PER_GATEWAY = 12;

    @Test
    @DisplayName("two gateways on one Redis: exactly the window's 10 of 24 racing Gemini calls pass, the rest 429")
    void twoGatewaysShareTheBudget() throws Exception {
        Path config = Harness.config(
                Map.of("max-concurrent: 2", "max-concurrent: 100", "minute: 5/1m", "minute: " + LIMIT + "/1m"), "");
        Map<String, String> environment = Map.of("GATEWAY_CONFIG", config.toString());
        List<Harness> fleet = Harness.fleet(2, environment);
        Harness first = fleet.get(0);
        Harness second = fleet.get(1);
        try {
            List<Callable<HttpResponse<String>>> calls = new ArrayList<>();
            for (int i = 0; i < 2 * CALLS_PER_GATEWAY; i++) {
                Harness via = fleet.get(i % 2);
                String body = "{\"contents\":[{\"parts\":[{\"text\":\"race " + i + "\"}]}],"
                        + "\"generationConfig\":{\"maxOutputTokens\":50}}";
                calls.add(() -> GeminiClientTest.post(
                        via, "/v1beta/models/gemini-2.0-flash:generateContent", "demo-free", body));
            }
            int ok = 0;
            int refused = 0;
            long tokens = 0;
            for (HttpResponse<String> answer : Harness.race(calls)) {
                JsonNode body = OpenAi.JSON.readTree(answer.body());
                if (answer.statusCode() == 200) {
                    ok++;
                    tokens += body.path("usageMetadata").path("totalTokenCount").asLong();
                } else {
                    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(429);
                    assertThat(body.path("error").path("status").asText()).isEqualTo("RESOURCE_EXHAUSTED");
                    refused++;
                }
            }
            assertThat(ok).isEqualTo(LIMIT);
            assertThat(refused).isEqualTo(2 * CALLS_PER_GATEWAY - LIMIT);
            assertThat(first.used("demo-user-free", "minute")).isEqualTo(LIMIT);
            assertThat(second.used("demo-user-free", "minute")).isEqualTo(LIMIT);
            long expected = tokens;
            AtomicLong seen = new AtomicLong();
            Harness.await("every admitted call settled to its usageMetadata", () -> {
                seen.set(first.used("demo-user-free", "tokens-minute"));
                return seen.get() == expected;
            });
            assertThat(second.used("demo-user-free", "tokens-minute")).isEqualTo(expected);
        } finally {
            fleet.forEach(Harness::close);
        }
    }
}
