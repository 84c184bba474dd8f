package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.errors.BadRequestException;
import com.anthropic.errors.NotFoundException;
import com.anthropic.errors.RateLimitException;
import com.anthropic.models.messages.batches.BatchCreateParams;
import com.anthropic.models.messages.batches.MessageBatch;
import com.anthropic.models.messages.batches.MessageBatchIndividualResponse;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.genai.ModelPrice;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Anthropic's Message Batches through the gateway, end to end with anthropic-java against a stub
 * Anthropic upstream the test moves through a batch's states; in memory, on a redis-server and on a
 * Redis Cluster. Prices: {@code claude-money*} costs $1 fresh input, $0.10 cache reads, $1.25 cache
 * writes and $5 output per million tokens online, half that in a batch, so a request that may take
 * 40,000 output tokens reserves $0.10 for its output. alice's tier allows $0.60 a day.
 */
@ParameterizedClass
@EnumSource(Harness.Store.class)
class AnthropicBatchTest {

    private static final String MODEL = "claude-money-1";
    private static final long MAX_TOKENS = 40_000;
    private static final ModelPrice BATCH = new ModelPrice(
            new BigDecimal("0.50"), new BigDecimal("0.05"), new BigDecimal("0.625"), new BigDecimal("2.50"));

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    private AnthropicStub anthropic;
    private Harness harness;

    @BeforeEach
    void start() throws Exception {
        anthropic = AnthropicStub.start();
        harness = start(3_600); // no poll during a test unless it asks for one
    }

    private Harness start(int pollSeconds) throws Exception {
        Path config = directory.resolve("gateway-" + pollSeconds + ".yaml");
        Files.writeString(
                config,
                anthropic.moneyConfig(
                        "  max-file-bytes: 65536\n  batch-poll-interval-seconds: " + pollSeconds + "\n", ""));
        return Harness.start(store, false, Map.of("GATEWAY_CONFIG", config.toString()));
    }

    @AfterEach
    void stop() {
        harness.close();
        anthropic.close();
    }

    private AnthropicClient client(String key) {
        return harness.anthropic(key);
    }

    private static BatchCreateParams.Request.Params params(long maxTokens) {
        return BatchCreateParams.Request.Params.builder()
                .model(MODEL)
                .maxTokens(maxTokens)
                .addUserMessage("hi")
                .build();
    }

    /** Creates a batch of {@code requests} requests, each allowing {@link #MAX_TOKENS}. */
    private static MessageBatch batch(AnthropicClient client, int requests) {
        BatchCreateParams.Builder batch = BatchCreateParams.builder();
        for (int i = 0; i < requests; i++) {
            batch.addRequest(BatchCreateParams.Request.builder()
                    .customId("r" + i)
                    .params(params(MAX_TOKENS))
                    .build());
        }
        return client.messages().batches().create(batch.build());
    }

    /** What a batch of {@code requests} requests reserves: each one's counted prompt and its most output, at batch prices. */
    private static long worstCase(int requests) {
        ObjectNode body = OpenAi.JSON.createObjectNode();
        body.putArray("messages").addObject().put("role", "user").put("content", "hi");
        long prompt = new AnthropicTokens().prompt(body);
        return BATCH.worstCaseMicros(requests * prompt, requests * MAX_TOKENS);
    }

    private long spent(String tenant) {
        return harness.used(tenant, "spend-day");
    }

    private long created() {
        return anthropic.received().stream()
                .filter(r -> r.method().equals("POST") && r.path().equals("/v1/messages/batches"))
                .count();
    }

    @Test
    @DisplayName("a batch reserves every request's prompt and max_tokens at half price, and settles to its results'"
            + " usage by kind when the owner reads it ended")
    void settledWhenEnded() {
        AnthropicClient alice = client("alice-key");
        MessageBatch batch = batch(alice, 2);
        assertThat(batch.processingStatus()).isEqualTo(MessageBatch.ProcessingStatus.IN_PROGRESS);
        assertThat(spent("alice")).isEqualTo(worstCase(2));

        assertThat(alice.messages().batches().retrieve(batch.id()).processingStatus())
                .isEqualTo(MessageBatch.ProcessingStatus.IN_PROGRESS);
        assertThat(spent("alice")).isEqualTo(worstCase(2)); // still reserved while it runs

        anthropic.batches().succeed(batch.id(), 1_000, 10_000, 800, 10_000);
        MessageBatch ended = alice.messages().batches().retrieve(batch.id());
        assertThat(ended.processingStatus()).isEqualTo(MessageBatch.ProcessingStatus.ENDED);
        assertThat(ended.requestCounts().succeeded()).isEqualTo(2);
        // per request: 1,000 x $0.50 + 10,000 x $0.05 + 800 x $0.625 + 10,000 x $2.50 per million
        assertThat(spent("alice")).isEqualTo(2 * 26_500);
        alice.messages().batches().retrieve(batch.id()); // a second read settles nothing more
        assertThat(spent("alice")).isEqualTo(2 * 26_500);

        try (StreamResponse<MessageBatchIndividualResponse> results =
                alice.messages().batches().resultsStreaming(batch.id())) {
            List<MessageBatchIndividualResponse> lines = results.stream().toList();
            assertThat(lines)
                    .extracting(MessageBatchIndividualResponse::customId)
                    .containsExactly("r0", "r1");
            assertThat(lines.get(0)
                            .result()
                            .succeeded()
                            .orElseThrow()
                            .message()
                            .usage()
                            .outputTokens())
                    .isEqualTo(10_000);
        }
        AnthropicStub.Received download = anthropic.received().stream()
                .filter(r -> r.path().endsWith("/results"))
                .reduce((earlier, later) -> later)
                .orElseThrow();
        assertThat(download.header("anthropic-version"))
                .as("the version anthropic-java sent, passed on")
                .isNotBlank();
        assertThat(download.header("x-api-key"))
                .as("the gateway's key upstream, never the client's")
                .isEqualTo("sk-ant-upstream");
        assertThat(alice.messages().batches().delete(batch.id()).id()).isEqualTo(batch.id());
        assertThat(spent("alice")).isEqualTo(2 * 26_500);
    }

    @Test
    @DisplayName("the poller settles a batch that ended without the owner asking")
    void settledByThePoller() throws Exception {
        harness.close();
        harness = start(1);
        AnthropicClient alice = client("alice-key");
        MessageBatch succeeded = batch(alice, 2);
        MessageBatch expired = batch(alice, 1);
        assertThat(spent("alice")).isEqualTo(worstCase(2) + worstCase(1));
        anthropic.batches().succeed(succeeded.id(), 1_000, 10_000, 800, 10_000);
        anthropic.batches().end(expired.id(), "expired");
        Harness.await("both batches settled by the poller", () -> spent("alice") == 2 * 26_500);
    }

    @Test
    @DisplayName("a batch beyond what is left of the tenant's budget is 429 before it reaches the upstream; one no"
            + " budget could ever hold is 400")
    void overBudgetRefused() {
        AnthropicClient alice = client("alice-key");
        batch(alice, 4);
        assertThat(spent("alice")).isEqualTo(worstCase(4));
        assertThatThrownBy(() -> batch(alice, 3))
                .isInstanceOfSatisfying(
                        RateLimitException.class,
                        e -> assertThat(e.type().orElseThrow().asString()).isEqualTo("rate_limit_error"))
                .hasMessageContaining("spend-day");
        assertThatThrownBy(() -> batch(client("dave-key"), 7))
                .isInstanceOf(BadRequestException.class)
                .hasMessageContaining("spend-day");
        assertThat(created()).as("only the admitted batch reached Anthropic").isEqualTo(1);
        assertThat(spent("alice")).isEqualTo(worstCase(4));
        assertThat(spent("dave")).isZero();
    }

    @Test
    @DisplayName("a canceled batch and an expired one give their reservation back when they end")
    void refundedWhenCanceledOrExpired() {
        AnthropicClient alice = client("alice-key");
        MessageBatch canceled = batch(alice, 2);
        MessageBatch expired = batch(alice, 1);
        assertThat(spent("alice")).isEqualTo(worstCase(2) + worstCase(1));

        assertThat(alice.messages().batches().cancel(canceled.id()).processingStatus())
                .isEqualTo(MessageBatch.ProcessingStatus.CANCELING);
        assertThat(spent("alice")).isEqualTo(worstCase(2) + worstCase(1));
        anthropic.batches().end(canceled.id(), "canceled");
        assertThat(alice.messages()
                        .batches()
                        .retrieve(canceled.id())
                        .requestCounts()
                        .canceled())
                .isEqualTo(2);
        assertThat(spent("alice")).isEqualTo(worstCase(1));

        anthropic.batches().end(expired.id(), "expired");
        alice.messages().batches().retrieve(expired.id());
        assertThat(spent("alice")).isZero();
    }

    @Test
    @DisplayName("another tenant can neither read, cancel, download, delete nor list a batch: Anthropic's 404")
    void onlyTheOwner() {
        AnthropicClient alice = client("alice-key");
        AnthropicClient carol = client("carol-key");
        MessageBatch batch = batch(alice, 1);
        anthropic.batches().succeed(batch.id(), 10, 0, 0, 10);

        assertThatThrownBy(() -> carol.messages().batches().retrieve(batch.id()))
                .isInstanceOfSatisfying(
                        NotFoundException.class,
                        e -> assertThat(e.type().orElseThrow().asString()).isEqualTo("not_found_error"));
        assertThatThrownBy(() -> carol.messages().batches().cancel(batch.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> carol.messages().batches().resultsStreaming(batch.id()))
                .isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> carol.messages().batches().delete(batch.id())).isInstanceOf(NotFoundException.class);
        assertThat(carol.messages().batches().list().data()).isEmpty();
        assertThat(alice.messages().batches().list().data())
                .extracting(MessageBatch::id)
                .containsExactly(batch.id());
        long asked = anthropic.received().stream()
                .filter(r -> r.path().startsWith("/v1/messages/batches/"))
                .count();
        assertThat(asked).as("carol's requests never reached Anthropic").isZero();
        assertThat(spent("carol")).isZero();
    }

    @Test
    @DisplayName("a bad batch is Anthropic's 400 before anything is charged or sent: no requests, a request"
            + " without max_tokens, two models")
    void badInput() throws Exception {
        for (String body : List.of(
                "{}",
                "{\"requests\":[]}",
                "{\"requests\":[{\"custom_id\":\"a\",\"params\":{\"model\":\"" + MODEL
                        + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}}]}",
                "{\"requests\":[{\"custom_id\":\"a\",\"params\":{\"model\":\"" + MODEL
                        + "\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}},"
                        + "{\"custom_id\":\"b\",\"params\":{\"model\":\"claude-money-2\",\"max_tokens\":5,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}}]}",
                "not json")) {
            var answer = harness.http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(harness.base() + "/v1/messages/batches"))
                            .header("x-api-key", "alice-key")
                            .header("anthropic-version", "2023-06-01")
                            .header("content-type", "application/json")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(body).isEqualTo(400);
            var error = OpenAi.JSON.readTree(answer.body());
            assertThat(error.path("type").asText()).as(body).isEqualTo("error");
            assertThat(error.path("error").path("type").asText()).as(body).isEqualTo("invalid_request_error");
        }
        assertThat(created()).isZero();
        assertThat(spent("alice")).isZero();
        assertThat(Objects.requireNonNull(harness.server.gateway()).admission().open())
                .isZero();
    }
}
