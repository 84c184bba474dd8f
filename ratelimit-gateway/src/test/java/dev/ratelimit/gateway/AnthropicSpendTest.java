package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.errors.RateLimitException;
import com.anthropic.models.messages.MessageCreateParams;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Spend windows through Anthropic's Messages API with anthropic-java: cache reads and writes at their
 * own prices, and a spend refusal as the SDK's {@code RateLimitException}; in memory, on a
 * redis-server and on a Redis Cluster.
 */
@ParameterizedClass
@EnumSource(Harness.Store.class)
class AnthropicSpendTest {

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    private AnthropicStub anthropic;
    private Harness harness;

    @BeforeEach
    void start() throws Exception {
        anthropic = AnthropicStub.start();
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(config, anthropic.moneyConfig("", ""));
        harness = Harness.start(store, false, Map.of("GATEWAY_CONFIG", config.toString()));
    }

    @AfterEach
    void stop() {
        harness.close();
        anthropic.close();
    }

    private AnthropicClient client(String key) {
        return harness.anthropic(key);
    }

    private static MessageCreateParams ask(long maxTokens) {
        return MessageCreateParams.builder()
                .model("claude-money-1")
                .maxTokens(maxTokens)
                .addUserMessage("hi")
                .build();
    }

    @Test
    @DisplayName("each kind of token at its price; a spend window's refusal is the SDK's RateLimitException")
    void spend() throws Exception {
        // $1 fresh input, $0.10 cache reads, $1.25 cache writes, $5 output per million tokens
        anthropic.enqueue(AnthropicStub.usage(1_000, 10_000, 800, 100_000));
        client("dave-key").messages().create(ask(100_000));
        assertThat(harness.used("dave", "spend-day"))
                .as("1,000 + 1,000 + 1,000 + 500,000 micro-dollars")
                .isEqualTo(503_000);

        assertThatThrownBy(() -> client("dave-key").messages().create(ask(100_000)))
                .isInstanceOf(RateLimitException.class)
                .hasMessageContaining("Spend limit reached")
                .hasMessageContaining("spend-day");
        assertThat(anthropic.received())
                .as("the refused call never reached Anthropic")
                .hasSize(1);
    }
}
