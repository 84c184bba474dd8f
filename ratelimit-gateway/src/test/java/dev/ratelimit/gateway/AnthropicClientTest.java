package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.Sleeper;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.errors.NotFoundException;
import com.anthropic.errors.OverloadedException;
import com.anthropic.errors.RateLimitException;
import com.anthropic.errors.UnauthorizedException;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.MessageTokensCount;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.mock.MockModel;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Anthropic's official Java SDK (anthropic-java) pointed at the gateway and its built-in mock model. */
class AnthropicClientTest extends MockGatewayTest {

    private static final String MODEL = "claude-sonnet-4-5";

    private AnthropicClient client(String key) {
        return harness.anthropic(key);
    }

    private static MessageCreateParams hello(String text) {
        return MessageCreateParams.builder()
                .model(MODEL)
                .maxTokens(256)
                .addUserMessage(text)
                .build();
    }

    private double settled(String outcome, String ending) {
        try {
            return harness.settlements(outcome, ending);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    @DisplayName("messages().create: the answer parses, the tokens charged are its usage, headers are Anthropic's")
    void create() throws Exception {
        Message message = client("demo-pro").messages().create(hello("Hello there"));

        assertThat(message.content().get(0).text().orElseThrow().text())
                .isEqualTo("Mock reply from the ratelimit gateway. You said: \"Hello there\"");
        long total = message.usage().inputTokens() + message.usage().outputTokens();
        Harness.await("settled", () -> settled("committed", "completed") == 1);
        assertThat(harness.tokens("demo-user-pro")).isEqualTo(total);
        assertThat(harness.inFlight("demo-user-pro")).isZero();

        var raw = client("demo-pro").messages().withRawResponse().create(hello("Hello there"));
        assertThat(raw.headers().values("anthropic-ratelimit-requests-limit")).containsExactly("60");
        assertThat(raw.headers().values("anthropic-ratelimit-requests-remaining"))
                .containsExactly("58");
        assertThat(raw.headers().values("anthropic-ratelimit-requests-reset")).containsExactly("2030-01-01T00:01:00Z");
        assertThat(raw.headers().values("anthropic-ratelimit-tokens-limit")).containsExactly("200000");
        assertThat(raw.headers().values("anthropic-ratelimit-input-tokens-limit"))
                .containsExactly("200000");
        assertThat(raw.headers().values("anthropic-ratelimit-output-tokens-remaining"))
                .hasSize(1);
    }

    @Test
    @DisplayName("messages().createStreaming: events arrive in order, the text and usage parse, usage is charged")
    void createStreaming() throws Exception {
        List<RawMessageStreamEvent> events = new CopyOnWriteArrayList<>();
        try (StreamResponse<RawMessageStreamEvent> stream =
                client("demo-pro").messages().createStreaming(hello("Hello there"))) {
            stream.stream().forEach(events::add);
        }

        String text = events.stream()
                .flatMap(event -> event.contentBlockDelta().stream())
                .flatMap(delta -> delta.delta().text().stream())
                .map(delta -> delta.text())
                .reduce("", String::concat);
        assertThat(text).isEqualTo("Mock reply from the ratelimit gateway. You said: \"Hello there\"");
        assertThat(events.get(0).messageStart()).isPresent();
        assertThat(events.get(events.size() - 1).messageStop()).isPresent();
        long input =
                events.get(0).messageStart().orElseThrow().message().usage().inputTokens();
        long output = events.stream()
                .flatMap(event -> event.messageDelta().stream())
                .mapToLong(delta -> delta.usage().outputTokens())
                .max()
                .orElseThrow();
        Harness.await("settled", () -> settled("committed", "stream_completed") == 1);
        assertThat(harness.tokens("demo-user-pro")).isEqualTo(input + output);
    }

    @Test
    @DisplayName(
            "the 6th demo-free call within a minute raises RateLimitException with retry-after and anthropic-ratelimit-*")
    void sixthFreeCall() {
        AnthropicClient client = client("demo-free");
        for (int i = 0; i < 5; i++) {
            client.messages().create(hello("Hi"));
        }
        harness.clock.advance(Duration.ofSeconds(10));

        assertThatThrownBy(() -> client.messages().create(hello("Hi")))
                .isInstanceOfSatisfying(RateLimitException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(429);
                    assertThat(e.type().orElseThrow().asString()).isEqualTo("rate_limit_error");
                    assertThat(e.getMessage())
                            .contains("Too many requests: the limit of 5 requests per minute (window 'minute')");
                    assertThat(e.headers().values("retry-after")).containsExactly("50");
                    assertThat(e.headers().values("retry-after-ms")).containsExactly("50000");
                    assertThat(e.headers().values("anthropic-ratelimit-requests-limit"))
                            .containsExactly("5");
                    assertThat(e.headers().values("anthropic-ratelimit-requests-remaining"))
                            .containsExactly("0");
                    assertThat(e.headers().values("anthropic-ratelimit-requests-reset"))
                            .containsExactly("2030-01-01T00:01:00Z");
                });
    }

    @Test
    @DisplayName("with retries on, the SDK waits what the gateway's retry-after-ms says, and the retry succeeds")
    void clientWaitsAsTold() {
        List<Duration> slept = new CopyOnWriteArrayList<>();
        Sleeper clockSleeper = new Sleeper() { // the SDK "sleeps" by moving the gateway's clock
                    @Override
                    public void sleep(Duration duration) {
                        slept.add(duration);
                        harness.clock.advance(duration);
                    }

                    @Override
                    public CompletableFuture<Void> sleepAsync(Duration duration) {
                        sleep(duration);
                        return CompletableFuture.completedFuture(null);
                    }

                    @Override
                    public void close() {}
                };
        AnthropicClient client = AnthropicOkHttpClient.builder()
                .baseUrl(harness.base())
                .apiKey("demo-free")
                .maxRetries(2)
                .sleeper(clockSleeper)
                .build();
        client.messages().create(hello("Hi"));
        harness.clock.advance(Duration.ofSeconds(55));
        for (int i = 0; i < 4; i++) {
            client.messages().create(hello("Hi"));
        }

        Message sixth = client.messages().create(hello("Hi"));

        assertThat(sixth.content()).hasSize(1);
        assertThat(slept).containsExactly(Duration.ofMillis(5_000));
    }

    @Test
    @DisplayName("an unknown key raises UnauthorizedException (the SDK's 401, type authentication_error)")
    void unknownKey() {
        assertThatThrownBy(() -> client("sk-nobody").messages().create(hello("Hi")))
                .isInstanceOfSatisfying(UnauthorizedException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(401);
                    assertThat(e.type().orElseThrow().asString()).isEqualTo("authentication_error");
                });
    }

    @Test
    @DisplayName("countTokens answers the gateway's own estimate and charges nothing")
    void countTokens() throws Exception {
        MessageTokensCount count = client("demo-free")
                .messages()
                .countTokens(MessageCountTokensParams.builder()
                        .model(MODEL)
                        .system("Be brief.")
                        .addUserMessage("How many tokens is this?")
                        .build());

        ObjectNode body = (ObjectNode) OpenAi.JSON.readTree("""
                {"model":"claude-sonnet-4-5","system":"Be brief.",
                 "messages":[{"role":"user","content":"How many tokens is this?"}]}""");
        assertThat(count.inputTokens()).isEqualTo(new AnthropicTokens().prompt(body));
        assertThat(count.inputTokens()).isGreaterThanOrEqualTo(MockModel.anthropicInput(body));
        assertThat(harness.tokens("demo-user-free")).isZero();
        var raw = client("demo-free").messages().withRawResponse().create(hello("Hi"));
        assertThat(raw.headers().values("anthropic-ratelimit-requests-remaining"))
                .as("count_tokens charged no request either")
                .containsExactly("4");
    }

    @Test
    @DisplayName("the mock's 529 on demand reaches the SDK as 529 overloaded_error, and nothing is charged")
    void overloadedPassesThrough() throws Exception {
        assertThatThrownBy(() -> client("demo-pro").messages().create(hello("[mock:529]")))
                .isInstanceOfSatisfying(OverloadedException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(529);
                    assertThat(e.type().orElseThrow().asString()).isEqualTo("overloaded_error");
                });
        Harness.await("cancelled", () -> settled("cancelled", "upstream_529") == 1);
        assertThat(harness.tokens("demo-user-pro")).isZero();
    }

    @Test
    @DisplayName(
            "an endpoint the gateway does not serve (agents, files) raises NotFoundException, not_found_error, uncharged")
    void unknownEndpoint() throws Exception {
        AnthropicClient client = client("demo-free");
        assertThatThrownBy(() -> client.beta().agents().list()).isInstanceOfSatisfying(NotFoundException.class, e -> {
            assertThat(e.statusCode()).isEqualTo(404);
            assertThat(e.type().orElseThrow().asString()).isEqualTo("not_found_error");
        });
        assertThatThrownBy(() -> client.beta().files().list())
                .isInstanceOfSatisfying(
                        NotFoundException.class,
                        e -> assertThat(e.type().orElseThrow().asString()).isEqualTo("not_found_error"));
        assertThat(harness.tokens("demo-user-free")).isZero();
        var raw = client.messages().withRawResponse().create(hello("Hi"));
        assertThat(raw.headers().values("anthropic-ratelimit-requests-remaining"))
                .as("the 404s charged no request")
                .containsExactly("4");
    }
}
