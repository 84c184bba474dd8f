package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.RateLimitException;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ResponseUsage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * openai-java's Responses API and legacy completions through the gateway and its built-in mock
 * model, in memory and on a private redis-server: the answers parse, and the tenant's token windows
 * (read with {@code RateLimiter.usage}) hold the upstream's usage.
 */
class ResponsesClientTest extends MockGatewayTest {

    private static final String SAID = "Mock reply from the ratelimit gateway. You said: \"Hello there\"";

    private static ResponseCreateParams hello() {
        return ResponseCreateParams.builder()
                .model("gpt-4o-mini")
                .instructions("Be brief.")
                .input("Hello there")
                .build();
    }

    @Test
    @DisplayName("responses().create: the text arrives and the token windows hold the usage's total")
    void plainResponse() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");

        Response response = client.responses().create(hello());

        String text = response.output()
                .get(0)
                .asMessage()
                .content()
                .get(0)
                .asOutputText()
                .text();
        assertThat(text).isEqualTo(SAID);
        ResponseUsage usage = response.usage().orElseThrow();
        assertThat(usage.totalTokens()).isEqualTo(usage.inputTokens() + usage.outputTokens());
        awaitSettled("completed", 1);
        assertThat(used("demo-user-pro", "tokens-minute")).isEqualTo(usage.totalTokens());
        assertThat(used("demo-user-pro", "minute")).isEqualTo(1);
        assertThat(harness.inFlight("demo-user-pro")).isZero();
    }

    @Test
    @DisplayName("responses().createStreaming: typed events arrive one by one; response.completed's usage is committed")
    void streamedResponse() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");

        List<ResponseStreamEvent> events = new CopyOnWriteArrayList<>();
        try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(hello())) {
            stream.stream().forEach(events::add);
        }

        String text = events.stream()
                .filter(ResponseStreamEvent::isOutputTextDelta)
                .map(event -> event.asOutputTextDelta().delta())
                .reduce("", String::concat);
        assertThat(text).isEqualTo(SAID);
        assertThat(events.get(0).isCreated()).isTrue();
        ResponseStreamEvent last = events.get(events.size() - 1);
        assertThat(last.isCompleted()).isTrue();
        long total = last.asCompleted().response().usage().orElseThrow().totalTokens();
        awaitSettled("stream_completed", 1);
        assertThat(used("demo-user-pro", "tokens-minute")).isEqualTo(total);
        assertThat(total)
                .isEqualTo(
                        client.responses().create(hello()).usage().orElseThrow().totalTokens());
    }

    @Test
    @DisplayName("max_output_tokens that cuts the reply: response.incomplete, and its usage is committed")
    void incompleteResponse() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");
        ResponseCreateParams cut = hello().toBuilder().maxOutputTokens(4L).build();

        List<ResponseStreamEvent> events = new CopyOnWriteArrayList<>();
        try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(cut)) {
            stream.stream().forEach(events::add);
        }

        ResponseStreamEvent last = events.get(events.size() - 1);
        assertThat(last.isIncomplete()).isTrue();
        ResponseUsage usage = last.asIncomplete().response().usage().orElseThrow();
        assertThat(usage.outputTokens()).isLessThanOrEqualTo(4);
        awaitSettled("stream_incomplete", 1);
        assertThat(used("demo-user-pro", "tokens-minute")).isEqualTo(usage.totalTokens());
    }

    @Test
    @DisplayName("the 6th demo-free response within a minute raises RateLimitException with retry-after")
    void sixthFreeResponse() {
        OpenAIClient client = harness.openAi("demo-free");
        for (int i = 0; i < 5; i++) {
            client.responses().create(hello());
        }
        harness.clock.advance(Duration.ofSeconds(10));

        assertThatThrownBy(() -> client.responses().create(hello()))
                .isInstanceOfSatisfying(RateLimitException.class, e -> {
                    assertThat(e.code()).contains("rate_limit_exceeded");
                    assertThat(e.headers().values("retry-after")).containsExactly("50");
                    assertThat(e.headers().values("x-ratelimit-remaining-requests"))
                            .containsExactly("0");
                });
    }

    @Test
    @DisplayName("a max_output_tokens no token window can hold: 400 request_too_large, nothing charged")
    void hugeMaxOutputTokens() throws Exception {
        OpenAIClient client = harness.openAi("demo-free");

        assertThatThrownBy(() -> client.responses()
                        .create(hello().toBuilder().maxOutputTokens(100_000L).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> {
                    assertThat(e.code()).contains("request_too_large");
                    assertThat(e.getMessage())
                            .contains("the limit of 20000 tokens per minute (window 'tokens-minute')");
                });
        assertThat(used("demo-user-free", "minute")).isZero();
        assertThat(used("demo-user-free", "tokens-minute")).isZero();
    }

    @Test
    @DisplayName("legacy completions, plain and streamed: the text arrives and each settles to its usage")
    void legacyCompletions() throws Exception {
        OpenAIClient client = harness.openAi("demo-pro");
        CompletionCreateParams params = CompletionCreateParams.builder()
                .model("gpt-4o-mini")
                .prompt("Hello there")
                .maxTokens(64L)
                .build();

        Completion plain = client.completions().create(params);

        assertThat(plain.choices().get(0).text()).isEqualTo(SAID);
        long total = plain.usage().orElseThrow().totalTokens();
        awaitSettled("completed", 1);
        assertThat(used("demo-user-pro", "tokens-minute")).isEqualTo(total);

        List<Completion> chunks = new CopyOnWriteArrayList<>();
        try (StreamResponse<Completion> stream = client.completions().createStreaming(params)) {
            stream.stream().forEach(chunks::add);
        }
        String text = chunks.stream()
                .flatMap(chunk -> chunk.choices().stream())
                .map(choice -> choice.text())
                .reduce("", String::concat);
        assertThat(text).isEqualTo(SAID);
        assertThat(chunks).noneMatch(chunk -> chunk.usage().isPresent());
        awaitSettled("stream_completed", 1);
        assertThat(used("demo-user-pro", "tokens-minute")).isEqualTo(2 * total);
    }

    private long used(String tenant, String window) {
        return harness.used(tenant, window);
    }

    private void awaitSettled(String ending, int count) throws InterruptedException {
        Harness.await("settled " + ending, () -> {
            try {
                return harness.settlements("committed", ending) == count;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
