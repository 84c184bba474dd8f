package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An upstream that says "slow down": while it answers 429 the gateway holds the model's requests
 * back (answering 429 itself, charging nothing) and lets one probe through per interval; a probe's
 * success ends the cooldown. On Redis the cooldown is shared by every gateway process.
 */
class CooldownTest extends UpstreamsTest {

    static final Duration PROBE_INTERVAL = Duration.ofSeconds(5);

    static int send(Harness gateway, int requests) throws Exception {
        int passed = 0;
        for (int i = 0; i < requests; i++) {
            HttpResponse<String> response = Upstreams.messages(gateway, "demo-pro", Upstreams.body(MODEL, false));
            assertThat(response.statusCode()).isIn(200, 429);
            passed += response.statusCode() == 200 ? 1 : 0;
        }
        return passed;
    }

    @Test
    @DisplayName("while the upstream says 429 it sees at most one probe per interval; a probe's success ends it")
    void oneProbePerInterval() throws Exception {
        for (int i = 0; i < 20; i++) {
            upstreams.anthropic.enqueue(AnthropicStub.status(429, Map.of("retry-after", "60")));
        }
        send(harness, 1); // the 429 that starts the cooldown
        assertThat(upstreams.anthropic.received()).hasSize(1);

        List<Integer> seen = new ArrayList<>();
        for (int interval = 0; interval < 4; interval++) {
            if (interval > 0) {
                harness.clock.advance(PROBE_INTERVAL);
            }
            send(harness, 4);
            seen.add(upstreams.anthropic.received().size());
        }
        // the interval the cooldown began in had its request; each later one lets exactly one through
        assertThat(seen).containsExactly(1, 2, 3, 4);

        harness.clock.advance(Duration.ofSeconds(2)); // still the last probe's interval
        HttpResponse<String> held = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));
        assertThat(held.statusCode()).isEqualTo(429);
        assertThat(held.headers().firstValue("retry-after"))
                .as("the last probe's 429 moved the end to 60 s after it")
                .contains("58");
        assertThat(held.headers().firstValue("retry-after-ms")).contains("58000");

        upstreams.anthropic.clearReceived();
        drain();
        harness.clock.advance(PROBE_INTERVAL);
        assertThat(send(harness, 3))
                .as("the probe succeeds, the cooldown ends, the rest pass")
                .isEqualTo(3);
        assertThat(upstreams.anthropic.received()).hasSize(3);
        assertThat(harness.metric("gateway_upstream_cooldowns_total", "upstream", "anthropic", "model", MODEL))
                .as("started once, moved by each probe's 429")
                .isEqualTo(4);
        assertThat(harness.admin("/status.json").body()).contains("\"cooldowns\":[]");
        assertThat(harness.metric("gateway_refusals_total", "code", "upstream_cooldown"))
                .isEqualTo(14);
        assertThat(harness.tokens("demo-user-pro"))
                .as("only the 3 answered requests were charged")
                .isEqualTo(3 * AnthropicStub.TOTAL);
    }

    @Test
    @DisplayName(
            "rate-limit headers saying none is left start a cooldown: OpenAI's x-ratelimit-*, Anthropic's anthropic-ratelimit-*")
    void remainingHeaders() throws Exception {
        upstreams.openai.enqueue((body, response) -> {
            response.header("x-ratelimit-remaining-requests", "0");
            response.header("x-ratelimit-reset-requests", "20s");
            StubUpstream.ok().answer(body, response);
        });
        String chat = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        assertThat(harness.chat("demo-pro", chat).statusCode()).isEqualTo(200);

        HttpResponse<String> held = harness.chat("demo-pro", chat);
        assertThat(held.statusCode()).isEqualTo(429);
        assertThat(held.headers().firstValue("retry-after")).contains("20");
        assertThat(held.body()).contains("\"code\":\"upstream_cooldown\"", "'openai'", "gpt-4o-mini");
        assertThat(upstreams.openai.received()).hasSize(1);

        upstreams.anthropic.enqueue(AnthropicStub.ok(Upstreams.headers(
                "anthropic-ratelimit-tokens-remaining",
                "0",
                "anthropic-ratelimit-tokens-reset",
                harness.clock.instant().plusSeconds(30).toString())));
        assertThat(send(harness, 1)).isEqualTo(1);
        HttpResponse<String> claude = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));
        assertThat(claude.statusCode()).isEqualTo(429);
        assertThat(claude.headers().firstValue("retry-after")).contains("30");
    }

    @Test
    @DisplayName(
            "Anthropic's 529 with retry-after starts a cooldown: the next request gets the gateway's own 429, uncharged")
    void overloadedWithRetryAfter() throws Exception {
        upstreams.anthropic.enqueue(AnthropicStub.status(529, Map.of("retry-after", "20")));
        HttpResponse<String> overloaded = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));
        assertThat(overloaded.statusCode())
                .as("the upstream's 529 is passed on")
                .isEqualTo(529);
        Harness.await("the 529 is settled", () -> {
            try {
                return harness.settlements("cancelled", "upstream_529") == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });

        HttpResponse<String> held = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));
        assertThat(held.statusCode()).isEqualTo(429);
        assertThat(held.headers().firstValue("retry-after")).contains("20");
        assertThat(held.headers().firstValue("retry-after-ms")).contains("20000");
        assertThat(OpenAi.JSON.readTree(held.body()).path("type").asText()).isEqualTo("error");
        assertThat(OpenAi.JSON.readTree(held.body()).path("error").path("type").asText())
                .isEqualTo("rate_limit_error");
        assertThat(held.body()).contains("'anthropic'", MODEL, "nothing was charged");
        assertThat(upstreams.anthropic.received())
                .as("the held request never reached the upstream")
                .hasSize(1);
        assertThat(harness.metric("gateway_refusals_total", "code", "upstream_cooldown"))
                .isEqualTo(1);
        assertThat(harness.metric("gateway_upstream_cooldowns_total", "upstream", "anthropic", "model", MODEL))
                .isEqualTo(1);
        assertThat(harness.used("demo-user-pro", "minute"))
                .as("neither request was charged")
                .isZero();
        assertThat(harness.tokens("demo-user-pro")).isZero();
    }

    private void drain() {
        // the queued 429s not used yet: replaced by plain answers from here on
        upstreams.anthropic.clearQueue();
    }
}
