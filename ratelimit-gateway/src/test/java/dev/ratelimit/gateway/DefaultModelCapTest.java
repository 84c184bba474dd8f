package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code "*"} entry under {@code models:}: requests for models not listed are charged to one cap
 * that they share, over HTTP against the stub upstream, while a listed model keeps its own.
 */
class DefaultModelCapTest {

    @TempDir
    Path directory;

    @Test
    @DisplayName("a request for a model not listed is charged to the \"*\" cap, which every such model shares")
    void unlistedModelIsChargedToTheDefaultCap() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, """
                keys:
                  - { key: k-star, tenant: star, tier: t }
                tiers:
                  t: { max-concurrent: 5, windows: { minute: 100/1m, tokens-minute: 1000000 tokens/1m } }
                models:
                  gpt-4o: { rpm: 100, tpm: 1000000 }
                  "*": { rpm: 1, tpm: 100000 }
                """);
        try (Harness harness = Harness.start(Harness.Store.MEMORY, true, Map.of("GATEWAY_CONFIG", config.toString()))) {
            assertThat(harness.chat("k-star", chat("gpt-unlisted")).statusCode())
                    .isEqualTo(200);
            // another model not listed shares that cap, whose one request a minute is taken
            assertThat(harness.chat("k-star", chat("gpt-another")).statusCode()).isEqualTo(429);
            // a listed model has its own
            assertThat(harness.chat("k-star", chat("gpt-4o")).statusCode()).isEqualTo(200);

            // one read of the status page (it serves one report per second)
            JsonNode status = OpenAi.JSON.readTree(harness.admin("/status.json").body());
            long used = StubUpstream.PROMPT + StubUpstream.COMPLETION;
            assertThat(used(model(status, "*"), "rpm")).isEqualTo(1);
            assertThat(used(model(status, "*"), "tpm")).isEqualTo(used);
            assertThat(used(model(status, "gpt-4o"), "rpm")).isEqualTo(1);
            assertThat(used(model(status, "gpt-4o"), "tpm")).isEqualTo(used);
            assertThat(harness.metric("gateway_tokens_total", "tenant", "star", "model", "*"))
                    .isEqualTo(used);

            ByteArrayOutputStream banner = new ByteArrayOutputStream();
            harness.server.printBanner(new PrintStream(banner, true, StandardCharsets.UTF_8));
            assertThat(banner.toString(StandardCharsets.UTF_8))
                    .contains(
                            "caps:     gpt-4o 100 rpm 1000000 tpm; every other model: 1 rpm 100000 tpm shared (\"*\")");
        }
    }

    private static String chat(String model) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    }

    /** The model's entry on {@code /status.json}. */
    private static JsonNode model(JsonNode status, String name) {
        for (JsonNode model : status.path("models")) {
            if (model.path("model").asText().equals(name)) {
                return model;
            }
        }
        throw new AssertionError("no model " + name + " on the status page: " + status);
    }

    private static long used(JsonNode model, String window) {
        for (JsonNode w : model.path("windows")) {
            if (w.path("name").asText().equals(window)) {
                return w.path("used").asLong();
            }
        }
        throw new AssertionError("no window " + window + " in " + model);
    }
}
