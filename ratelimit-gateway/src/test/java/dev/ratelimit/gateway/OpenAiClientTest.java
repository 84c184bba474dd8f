package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.core.Sleeper;
import com.openai.core.http.StreamResponse;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The official openai-java client pointed at the gateway and its built-in mock model. */
class OpenAiClientTest extends MockGatewayTest {

    private static ChatCompletionCreateParams hello() {
        return ChatCompletionCreateParams.builder()
                .model("gpt-4o-mini")
                .addUserMessage("Hello there")
                .build();
    }

    @Test
    @DisplayName("a plain completion parses: content, usage, and the tokens charged are the usage's")
    void plainCompletion() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");

        ChatCompletion completion = client.chat().completions().create(hello());

        assertThat(completion.choices().get(0).message().content())
                .contains("Mock reply from the ratelimit gateway. You said: \"Hello there\"");
        long total = completion.usage().orElseThrow().totalTokens();
        assertThat(total).isPositive();
        Harness.await("settled", () -> settled("committed", "completed") == 1);
        assertThat(harness.tokens("demo-user-pro")).isEqualTo(total);
        assertThat(harness.inFlight("demo-user-pro")).isZero();
    }

    @Test
    @DisplayName("a stream parses chunk by chunk; the usage chunk reaches the client only if it asked")
    void streamingCompletion() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");

        List<ChatCompletionChunk> chunks = new CopyOnWriteArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream =
                client.chat().completions().createStreaming(hello())) {
            stream.stream().forEach(chunks::add);
        }
        String text = chunks.stream()
                .flatMap(chunk -> chunk.choices().stream())
                .map(choice -> choice.delta().content().orElse(""))
                .reduce("", String::concat);
        assertThat(text).isEqualTo("Mock reply from the ratelimit gateway. You said: \"Hello there\"");
        assertThat(chunks).noneMatch(chunk -> chunk.usage().isPresent());
        Harness.await("settled", () -> settled("committed", "stream_completed") == 1);
        double charged = harness.tokens("demo-user-pro");
        assertThat(charged).isPositive();

        List<ChatCompletionChunk> withUsage = new CopyOnWriteArrayList<>();
        ChatCompletionCreateParams asked = hello().toBuilder()
                .streamOptions(
                        ChatCompletionStreamOptions.builder().includeUsage(true).build())
                .build();
        try (StreamResponse<ChatCompletionChunk> stream =
                client.chat().completions().createStreaming(asked)) {
            stream.stream().forEach(withUsage::add);
        }
        ChatCompletionChunk last = withUsage.get(withUsage.size() - 1);
        assertThat(last.choices()).isEmpty();
        long total = last.usage().orElseThrow().totalTokens();
        assertThat(total).isEqualTo((long) charged); // the same request: the same usage
        Harness.await("settled", () -> settled("committed", "stream_completed") == 2);
        assertThat(harness.tokens("demo-user-pro")).isEqualTo(2 * charged);
    }

    @Test
    @DisplayName(
            "each settled call is in OpenTelemetry's GenAI client metrics: tokens by type, duration, operation, provider, model")
    void genAiMetrics() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");
        long prompt = client.chat()
                .completions()
                .create(hello())
                .usage()
                .orElseThrow()
                .promptTokens();
        try (StreamResponse<ChatCompletionChunk> stream =
                client.chat().completions().createStreaming(hello())) {
            stream.stream().forEach(chunk -> {});
        }
        client.embeddings()
                .create(EmbeddingCreateParams.builder()
                        .model("text-embedding-3-small")
                        .input("the quick brown fox")
                        .build());
        Harness.await("settled", () -> settled("committed", "stream_completed") == 1);

        String[] chat = {
            "gen_ai_operation_name", "chat",
            "gen_ai_provider_name", "openai",
            "gen_ai_request_model", "gpt-4o-mini"
        };
        assertThat(genAi("gen_ai_client_token_usage_count", chat, "gen_ai_token_type", "input"))
                .isEqualTo(2);
        assertThat(genAi("gen_ai_client_token_usage_sum", chat, "gen_ai_token_type", "input"))
                .as("the plain and the streamed call's prompt, the same request")
                .isEqualTo(2.0 * prompt);
        assertThat(genAi("gen_ai_client_token_usage_sum", chat, "gen_ai_token_type", "output"))
                .isPositive();
        assertThat(genAi("gen_ai_client_operation_duration_seconds_count", chat))
                .isEqualTo(2);
        assertThat(harness.metric("gen_ai_client_operation_duration_seconds_count", "error_type", "stream_completed"))
                .as("a completed stream is no error")
                .isZero();
        assertThat(harness.metric(
                        "gen_ai_client_token_usage_sum",
                        "gen_ai_operation_name",
                        "embeddings",
                        "gen_ai_request_model",
                        "text-embedding-3-small",
                        "gen_ai_token_type",
                        "input"))
                .isEqualTo(4);
    }

    private double genAi(String name, String[] labels, String... more) throws Exception {
        String[] all = java.util.Arrays.copyOf(labels, labels.length + more.length);
        System.arraycopy(more, 0, all, labels.length, more.length);
        return harness.metric(name, all);
    }

    @Test
    @DisplayName("embeddings and the model list parse")
    void embeddingsAndModels() {
        OpenAIClient client = harness.openAi("demo-pro");

        CreateEmbeddingResponse embeddings = client.embeddings()
                .create(EmbeddingCreateParams.builder()
                        .model("text-embedding-3-small")
                        .input("the quick brown fox")
                        .build());

        assertThat(embeddings.data()).hasSize(1);
        assertThat(embeddings.data().get(0).embedding()).hasSize(8);
        assertThat(embeddings.usage().promptTokens()).isEqualTo(4);
        assertThat(client.models().list().data())
                .extracting(model -> model.id())
                .contains("ratelimit-mock", "gpt-4o-mini", "text-embedding-3-small");
    }

    @Test
    @DisplayName("the 6th demo-free call within a minute raises RateLimitException with retry-after and x-ratelimit-*")
    void sixthFreeCall() {
        OpenAIClient client = harness.openAi("demo-free");
        for (int i = 0; i < 5; i++) {
            client.chat().completions().create(hello());
        }
        harness.clock.advance(Duration.ofSeconds(10));

        assertThatThrownBy(() -> client.chat().completions().create(hello()))
                .isInstanceOfSatisfying(RateLimitException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(429);
                    assertThat(e.code()).contains("rate_limit_exceeded");
                    assertThat(e.getMessage()).contains("the limit of 5 requests per minute (window 'minute')");
                    assertThat(e.headers().values("retry-after")).containsExactly("50");
                    assertThat(e.headers().values("retry-after-ms")).containsExactly("50000");
                    assertThat(e.headers().values("x-ratelimit-limit-requests")).containsExactly("5");
                    assertThat(e.headers().values("x-ratelimit-remaining-requests"))
                            .containsExactly("0");
                    assertThat(e.headers().values("x-ratelimit-reset-requests")).containsExactly("50s");
                    assertThat(e.headers().values("x-ratelimit-window")).containsExactly("minute");
                });
    }

    @Test
    @DisplayName("the model list's 6th call (the library's RateLimitFilter) raises RateLimitException too")
    void sixthModelList() {
        OpenAIClient client = harness.openAi("demo-free");
        for (int i = 0; i < 5; i++) {
            client.models().list();
        }

        assertThatThrownBy(() -> client.models().list()).isInstanceOfSatisfying(RateLimitException.class, e -> {
            assertThat(e.code()).contains("rate_limit_exceeded");
            assertThat(e.getMessage()).contains("the limit of 5 requests per minute (window 'minute')");
            assertThat(e.headers().values("retry-after")).containsExactly("60");
            assertThat(e.headers().values("retry-after-ms")).containsExactly("60000");
            assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
        });
    }

    @Test
    @DisplayName("with retries on, the client waits what retry-after-ms says, and the retry succeeds")
    void clientWaitsAsTold() {
        List<Duration> slept = new CopyOnWriteArrayList<>();
        Sleeper clockSleeper = new Sleeper() { // the client "sleeps" by moving the gateway's clock
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
        OpenAIClient client = harness.openAi("demo-free", 2, clockSleeper);
        client.chat().completions().create(hello());
        harness.clock.advance(Duration.ofSeconds(55));
        for (int i = 0; i < 4; i++) {
            client.chat().completions().create(hello());
        }

        ChatCompletion sixth = client.chat().completions().create(hello());

        assertThat(sixth.choices()).hasSize(1);
        // the first call leaves the minute window 60 s after it came and 55 s have passed: the 429
        // said retry-after-ms 5000 and the client slept exactly that (openai-java honours the header
        // up to its 8 s MAX_RETRY_DELAY; a longer wait is cut to 8 s and answered by another 429)
        assertThat(slept).containsExactly(Duration.ofMillis(5_000));
    }

    private double settled(String outcome, String ending) {
        try {
            return harness.settlements(outcome, ending);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
