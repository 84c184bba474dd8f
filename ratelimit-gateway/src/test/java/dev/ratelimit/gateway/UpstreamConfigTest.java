package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.upstream.Upstream;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The {@code upstreams:} section, the model patterns, and the upstream's retry and reset headers. */
class UpstreamConfigTest {

    private static final String BASE = """
            keys:
              - { key: sk-alpha-123, tenant: alpha, tier: basic }
            tiers:
              basic:
                max-concurrent: 3
                windows: { minute: 5/1m }
            """;

    private static GatewayConfig parse(String yaml, Map<String, String> environment) throws Exception {
        return GatewayConfig.parse(
                new ByteArrayInputStream((BASE + yaml).getBytes(StandardCharsets.UTF_8)), "test.yaml", environment);
    }

    @Test
    @DisplayName("upstreams are read in file order with their key from the environment, protocol, models and probe")
    void section() throws Exception {
        GatewayConfig config = parse("""
                upstreams:
                  anthropic:
                    url: https://api.anthropic.com/v1
                    api-key: ${ANTHROPIC_API_KEY}
                    protocol: anthropic
                    models: ["claude-*"]
                  local:
                    url: http://127.0.0.1:8000/v1
                    protocol: OpenAI
                    models: [llama-3, "meta-llama/*"]
                    probe-interval-seconds: 2
                    http-version: 2
                """, Map.of("ANTHROPIC_API_KEY", "sk-ant-secret"));

        assertThat(config.upstreams()).extracting(UpstreamConfig::name).containsExactly("anthropic", "local");
        UpstreamConfig anthropic = config.upstreams().get(0);
        assertThat(anthropic.apiKey()).isEqualTo("sk-ant-secret");
        assertThat(anthropic.protocol()).isEqualTo(Protocol.ANTHROPIC);
        assertThat(anthropic.probeInterval()).isEqualTo(UpstreamConfig.DEFAULT_PROBE_INTERVAL);
        assertThat(anthropic.http2()).as("HTTP/1.1 unless asked").isFalse();
        assertThat(anthropic.toString()).doesNotContain("sk-ant-secret");
        UpstreamConfig local = config.upstreams().get(1);
        assertThat(local.apiKey()).isNull();
        assertThat(local.protocol()).isEqualTo(Protocol.OPENAI);
        assertThat(local.probeInterval()).isEqualTo(Duration.ofSeconds(2));
        assertThat(local.http2()).isTrue();
        assertThat(local.servesExactly("llama-3")).isTrue();
        assertThat(local.servesByPattern("meta-llama/Llama-3.1-8B")).isTrue();
        assertThat(local.servesByPattern("llama-3")).isFalse();
    }

    @Test
    @DisplayName("every bad entry is reported at once, naming it")
    void errors() {
        assertThatThrownBy(() -> parse("""
                        upstreams:
                          a:
                            url: ftp://example.com
                            protocol: openai
                            models: [x]
                          b:
                            url: https://example.com/v1
                            protocol: mistral
                            models: [x]
                          c:
                            url: https://example.com/v1
                            protocol: anthropic
                          d:
                            url: https://example.com/v1
                            protocol: openai
                            models: [x]
                            probe-interval-seconds: 0
                          e:
                            url: https://example.com/v1
                            protocol: openai
                            models: [x]
                            http-version: 3
                        """, Map.of()))
                .hasMessageContaining("5 errors")
                .hasMessageContaining("upstreams.a.url: must be an http(s) URL")
                .hasMessageContaining("upstreams.b.protocol: must be openai, anthropic or gemini, was 'mistral'")
                .hasMessageContaining("upstreams.c.models: list the models it serves")
                .hasMessageContaining("upstreams.d.probe-interval-seconds: must be at least 1")
                .hasMessageContaining("upstreams.e.http-version: must be \"1.1\" or \"2\", was '3'");
    }

    @Test
    @DisplayName("UPSTREAM_URL is the one-upstream shorthand; with an upstreams: section it is an error")
    void shorthand() throws Exception {
        GatewayConfig none = parse("", Map.of());
        List<UpstreamConfig> one = Upstream.configured(
                none, Map.of("UPSTREAM_URL", "https://api.anthropic.com/v1", "UPSTREAM_PROTOCOL", "anthropic"), null);
        assertThat(one).singleElement().satisfies(upstream -> {
            assertThat(upstream.protocol()).isEqualTo(Protocol.ANTHROPIC);
            assertThat(upstream.models()).containsExactly("*");
            assertThat(upstream.http2()).isFalse();
        });
        assertThat(Upstream.configured(
                                none,
                                Map.of("UPSTREAM_URL", "http://127.0.0.1:1/v1", "UPSTREAM_HTTP_VERSION", "2"),
                                null)
                        .get(0)
                        .http2())
                .isTrue();
        assertThatThrownBy(() -> Upstream.configured(
                        none, Map.of("UPSTREAM_URL", "http://127.0.0.1:1/v1", "UPSTREAM_HTTP_VERSION", "2.0"), null))
                .hasMessage("UPSTREAM_HTTP_VERSION: must be \"1.1\" or \"2\", was '2.0'");
        assertThat(Upstream.configured(none, Map.of(), URI.create("http://127.0.0.1:1/v1")))
                .extracting(UpstreamConfig::protocol, upstream -> upstream.url().toString())
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(Protocol.OPENAI, "http://127.0.0.1:1/v1"),
                        org.assertj.core.groups.Tuple.tuple(Protocol.ANTHROPIC, "http://127.0.0.1:1/v1"),
                        org.assertj.core.groups.Tuple.tuple(Protocol.GEMINI, "http://127.0.0.1:1/v1beta"));
        GatewayConfig section = parse("""
                upstreams:
                  a: { url: "https://example.com/v1", protocol: openai, models: ["*"] }
                """, Map.of());
        assertThatThrownBy(() -> Upstream.configured(section, Map.of("UPSTREAM_URL", "https://x.example/v1"), null))
                .hasMessageContaining("UPSTREAM_URL is set and test.yaml has an upstreams: section");
    }

    @Test
    @DisplayName("patterns: * is any run of characters, everything else literal")
    void patterns() {
        assertThat(UpstreamConfig.matches("claude-*", "claude-sonnet-4-5")).isTrue();
        assertThat(UpstreamConfig.matches("claude-*", "claude-")).isTrue();
        assertThat(UpstreamConfig.matches("claude-*", "gpt-4o")).isFalse();
        assertThat(UpstreamConfig.matches("*", "anything")).isTrue();
        assertThat(UpstreamConfig.matches("gpt-*-mini", "gpt-4o-mini")).isTrue();
        assertThat(UpstreamConfig.matches("gpt-*-mini", "gpt-4o")).isFalse();
        assertThat(UpstreamConfig.matches("a*a", "a")).isFalse();
        assertThat(UpstreamConfig.matches("gpt-4.1", "gpt-411")).isFalse();
    }

    @Test
    @DisplayName("the upstream's retry time: retry-after-ms first, then retry-after in seconds or as an HTTP date")
    void retryDelay() {
        Instant now = Instant.parse("2030-01-01T00:00:00Z");
        assertThat(Upstream.retryDelay("1500", "9", now)).isEqualTo(Duration.ofMillis(1_500));
        assertThat(Upstream.retryDelay(null, "9", now)).isEqualTo(Duration.ofSeconds(9));
        assertThat(Upstream.retryDelay(null, "Tue, 01 Jan 2030 00:00:30 GMT", now))
                .isEqualTo(Duration.ofSeconds(30));
        assertThat(Upstream.retryDelay(null, "soon", now)).isNull();
        assertThat(Upstream.retryDelay(null, null, now)).isNull();
        assertThat(Upstream.goDuration("6m0s")).isEqualTo(Duration.ofMinutes(6));
        assertThat(Upstream.goDuration("1.5s")).isEqualTo(Duration.ofMillis(1_500));
        assertThat(Upstream.goDuration("12ms")).isEqualTo(Duration.ofMillis(12));
        assertThat(Upstream.goDuration("1h2m3s")).isEqualTo(Duration.ofSeconds(3_723));
        assertThat(Upstream.goDuration("later")).isNull();
    }
}
