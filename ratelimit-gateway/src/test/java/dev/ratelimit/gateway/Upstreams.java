package dev.ratelimit.gateway;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A gateway with two upstreams of its {@code upstreams:} section, each a stub the test controls:
 * {@code openai} (an OpenAI stub serving {@code gpt-*} and {@code text-embedding-3-small}) and
 * {@code anthropic} (an Anthropic stub serving {@code claude-*}, probing every 5 seconds).
 */
final class Upstreams implements AutoCloseable {

    static final String ANTHROPIC_KEY = "sk-ant-upstream";

    final StubUpstream openai;
    final AnthropicStub anthropic;
    final Path config;
    final Harness harness;

    private Upstreams(StubUpstream openai, AnthropicStub anthropic, Path config, Harness harness) {
        this.openai = openai;
        this.anthropic = anthropic;
        this.config = config;
        this.harness = harness;
    }

    static Upstreams start(Harness.Store store, Path directory) throws Exception {
        StubUpstream openai = StubUpstream.start();
        AnthropicStub anthropic = AnthropicStub.start();
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(
                config,
                Files.readString(Harness.testConfig())
                        + """

                upstreams:
                  openai:
                    url: %s
                    api-key: ${OPENAI_KEY}
                    protocol: openai
                    models: ["gpt-*", text-embedding-3-small]
                  anthropic:
                    url: %s
                    api-key: %s
                    protocol: anthropic
                    models: ["claude-*"]
                    probe-interval-seconds: 5
                """.formatted(openai.baseUrl(), anthropic.baseUrl(), ANTHROPIC_KEY));
        return new Upstreams(openai, anthropic, config, gateway(store, config));
    }

    /** Another gateway process on the same configuration (and, on Redis, the same server). */
    static Harness gateway(Harness.Store store, Path config) throws Exception {
        return Harness.start(
                store, false, Map.of("GATEWAY_CONFIG", config.toString(), "OPENAI_KEY", Harness.UPSTREAM_KEY));
    }

    /** {@code POST /v1/messages} with {@code x-api-key} as Anthropic's clients send it. */
    static HttpResponse<String> messages(Harness harness, @Nullable String key, String json, String... headers)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(harness.base() + "/v1/messages"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .header("anthropic-version", "2023-06-01")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            request.header("x-api-key", key);
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return harness.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    static String body(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"max_tokens\":100,\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    static Map<String, String> headers(String... pairs) {
        Map<String, String> headers = new HashMap<>();
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            headers.put(pairs[i], pairs[i + 1]);
        }
        return headers;
    }

    @Override
    public void close() {
        harness.close();
        openai.close();
        anthropic.close();
    }
}
