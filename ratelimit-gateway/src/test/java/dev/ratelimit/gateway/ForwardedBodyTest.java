package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.openai.OpenAiEndpoint;
import dev.ratelimit.gateway.protocol.openai.Requests;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What a metered request sends upstream: the client's bytes as they came when the gateway changed
 * nothing in the body, the parsed body written out when it did (a stream's usage option) or when the
 * bytes are not plain UTF-8.
 */
class ForwardedBodyTest {

    private static final String PLAIN = "{ \"model\" : \"gpt-4o-mini\",\n \"temperature\": 0.70,"
            + " \"messages\": [{\"role\": \"user\", \"content\": \"caf\\u00e9 \u00e9t\u00e9\"}] }";

    private final TokenCounter tokens = new TokenCounter();

    private Endpoint.Call parse(byte[] bytes) throws Exception {
        return OpenAiEndpoint.CHAT.parse(
                Requests.json(bytes), GatewayConfig.load(null, Map.of()).limits(), tokens);
    }

    @Test
    @DisplayName("a body the gateway left as it was goes upstream byte for byte, spacing and escapes included")
    void unchangedGoesAsSent() throws Exception {
        byte[] sent = PLAIN.getBytes(StandardCharsets.UTF_8);

        byte[] forwarded = Requests.forwarded(parse(sent), sent);

        assertThat(forwarded).isSameAs(sent);
    }

    @Test
    @DisplayName("a stream the gateway asks usage of goes upstream written out again, with include_usage")
    void rewrittenIsWrittenOut() throws Exception {
        byte[] sent =
                PLAIN.replace("{ \"model\"", "{\"stream\": true, \"model\"").getBytes(StandardCharsets.UTF_8);

        Endpoint.Call call = parse(sent);
        byte[] forwarded = Requests.forwarded(call, sent);

        assertThat(call.rewritten()).isTrue();
        assertThat(Requests.json(forwarded)).isEqualTo(call.body());
        assertThat(call.body().path("stream_options").path("include_usage").asBoolean())
                .isTrue();
    }

    @Test
    @DisplayName("a body in UTF-16, or UTF-8 behind a byte-order mark, goes upstream as plain UTF-8")
    void otherEncodingsAreWrittenOut() throws Exception {
        byte[] utf16 = PLAIN.getBytes(StandardCharsets.UTF_16LE);
        byte[] bom = ("\uFEFF" + PLAIN).getBytes(StandardCharsets.UTF_8);

        for (byte[] sent : new byte[][] {utf16, bom}) {
            Endpoint.Call call = parse(sent);
            byte[] forwarded = Requests.forwarded(call, sent);

            assertThat(forwarded).isNotSameAs(sent);
            assertThat(forwarded[0]).isEqualTo((byte) '{');
            assertThat(Requests.json(forwarded)).isEqualTo(call.body());
        }
    }
}
