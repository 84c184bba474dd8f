package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.errors.NotFoundException;
import com.openai.errors.RateLimitException;
import com.openai.models.batches.Batch;
import com.openai.models.batches.BatchCreateParams;
import com.openai.models.files.FileCreateParams;
import com.openai.models.files.FilePurpose;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * OpenAI's Batch API through the gateway, end to end with openai-java against a stub upstream the
 * test moves through a batch's states. Prices ({@code gateway-money.yaml}): {@code metered} costs $2
 * per million output tokens online and nothing for input, so $1 per million in a batch: a line
 * that may take 100,000 output tokens reserves exactly $0.10. alice's tier allows $0.60 a day.
 */
@ParameterizedClass
@EnumSource(Harness.Store.class)
class BatchTest {

    private static final long DIME = 100_000; // $0.10 in micro-dollars

    @Parameter
    Harness.Store store;

    private Harness harness;

    @BeforeEach
    void start() throws Exception {
        harness = start(3_600); // no poll during a test: what it sees, it learned from the owner's GET
    }

    /** A gateway on {@code gateway-money.yaml} polling batches every {@code pollSeconds}, uploads up to 2,048 bytes. */
    private Harness start(int pollSeconds) throws Exception {
        Path money = Path.of(BatchTest.class.getResource("gateway-money.yaml").toURI());
        Path config = Files.createTempFile("gateway-batches", ".yaml");
        config.toFile().deleteOnExit();
        Files.writeString(
                config,
                Files.readString(money)
                        .replace(
                                "prices:\n",
                                "prices:\n  metered-batch: { input: 0, output: 2.00, batch-output: 0.40 }\n"
                                        + "  metered-queued: { input: 0, output: 0.02 }\n")
                        .replace(
                                "\nmodels:\n",
                                "\nmodels:\n  metered-queued: { tpm: 1000, batch-tokens: 250000 tokens/1d }\n")
                        .replace(
                                "  max-body-bytes: 4096\n",
                                "  max-body-bytes: 4096\n  max-file-bytes: 2048\n  batch-poll-interval-seconds: "
                                        + pollSeconds + "\n"));
        return Harness.start(store, true, Map.of("GATEWAY_CONFIG", config.toString()));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    /** Uploads a batch file of {@code lines} chat requests, each allowing {@code maxTokens}, then creates the batch. */
    static Batch batch(OpenAIClient client, int lines, long maxTokens) {
        return batch(client, "metered", lines, maxTokens);
    }

    /** Uploads a batch file of {@code lines} chat requests for {@code model}, then creates the batch. */
    private static Batch batch(OpenAIClient client, String model, int lines, long maxTokens) {
        StringBuilder jsonl = new StringBuilder();
        for (int i = 0; i < lines; i++) {
            jsonl.append("{\"custom_id\":\"r")
                    .append(i)
                    .append("\",\"method\":\"POST\",\"url\":\"/v1/chat/completions\",\"body\":{\"model\":\"")
                    .append(model)
                    .append("\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_completion_tokens\":")
                    .append(maxTokens)
                    .append("}}\n");
        }
        String file = client.files()
                .create(FileCreateParams.builder()
                        .file(jsonl.toString().getBytes(StandardCharsets.UTF_8))
                        .purpose(FilePurpose.BATCH)
                        .build())
                .id();
        return client.batches()
                .create(BatchCreateParams.builder()
                        .inputFileId(file)
                        .endpoint(BatchCreateParams.Endpoint.V1_CHAT_COMPLETIONS)
                        .completionWindow(BatchCreateParams.CompletionWindow._24H)
                        .build());
    }

    private long spent(String tenant) {
        return harness.used(tenant, "spend-day");
    }

    private long batchesCreatedUpstream() {
        return harness.stub().received().stream()
                .filter(r -> r.method().equals("POST") && r.path().equals("/v1/batches"))
                .count();
    }

    @Test
    @DisplayName("a batch reserves every line's worst case at half price, and settles to its output's usage when the"
            + " owner reads it completed")
    void settledWhenCompleted() {
        OpenAIClient alice = harness.openAi("alice-key");
        Batch batch = batch(alice, 2, 100_000);
        assertThat(spent("alice")).isEqualTo(2 * DIME);

        harness.stub().batches().end(batch.id(), "in_progress");
        assertThat(alice.batches().retrieve(batch.id()).status()).isEqualTo(Batch.Status.IN_PROGRESS);
        assertThat(spent("alice")).isEqualTo(2 * DIME); // still reserved while it runs

        harness.stub().batches().complete(batch.id(), 10, 3_000);
        assertThat(alice.batches().retrieve(batch.id()).status()).isEqualTo(Batch.Status.COMPLETED);
        assertThat(spent("alice")).isEqualTo(6_000); // 6,000 output tokens at $1 per million
        alice.batches().retrieve(batch.id()); // a second read settles nothing more
        assertThat(spent("alice")).isEqualTo(6_000);
    }

    @Test
    @DisplayName("a price entry's batch-output is what a batch reserves and settles at, not half the online price")
    void batchPriceFromTheTable() {
        OpenAIClient alice = harness.openAi("alice-key");
        Batch batch = batch(alice, "metered-batch", 2, 100_000);
        assertThat(spent("alice")).isEqualTo(2 * 40_000); // 100,000 tokens at $0.40 per million each
        harness.stub().batches().complete(batch.id(), 10, 3_000);
        alice.batches().retrieve(batch.id());
        assertThat(spent("alice")).isEqualTo(2_400); // 6,000 output tokens at $0.40 per million
    }

    @Test
    @DisplayName("a model's batch-tokens window takes its batches in place of its tpm cap: reserved at admission,"
            + " refused past it before the upstream, settled with the batch")
    void batchTokensWindow() throws Exception {
        GatewayConfig.ModelCap cap = harness.server.gateway().config().capOf("metered-queued");
        OpenAIClient alice = harness.openAi("alice-key");
        Batch first = batch(alice, "metered-queued", 2, 100_000); // far beyond tpm: 1000, within batch-tokens
        long reserved = harness.used(cap.batchTokens(), "batch-tokens");
        assertThat(reserved).isGreaterThan(200_000).isLessThan(250_000);
        assertThat(harness.used(cap.budget(), "tpm"))
                .as("the online cap is not charged")
                .isZero();

        assertThatThrownBy(() -> batch(alice, "metered-queued", 1, 100_000))
                .isInstanceOf(RateLimitException.class)
                .hasMessageContaining("batch-tokens");
        assertThat(batchesCreatedUpstream()).isEqualTo(1);

        harness.stub().batches().complete(first.id(), 10, 3_000);
        alice.batches().retrieve(first.id());
        assertThat(harness.used(cap.batchTokens(), "batch-tokens")).isEqualTo(2 * 3_010);
        batch(alice, "metered-queued", 1, 100_000); // fits now that the first settled
        assertThat(batchesCreatedUpstream()).isEqualTo(2);
        JsonNode model = StreamSupport.stream(
                        OpenAi.JSON
                                .readTree(harness.admin("/status.json").body())
                                .path("models")
                                .spliterator(),
                        false)
                .filter(node -> node.path("model").asText().equals("metered-queued"))
                .findFirst()
                .orElseThrow();
        assertThat(model.path("batchTokens").path("windows").get(0).path("name").asText())
                .as("the status page shows the model's batch-tokens window")
                .isEqualTo("batch-tokens");
    }

    @Test
    @DisplayName("the poller settles a batch that ended without the owner asking")
    void settledByThePoller() throws Exception {
        harness.close();
        harness = start(1);
        OpenAIClient alice = harness.openAi("alice-key");
        Batch completed = batch(alice, 2, 100_000);
        Batch expired = batch(alice, 1, 100_000);
        assertThat(spent("alice")).isEqualTo(3 * DIME);
        harness.stub().batches().complete(completed.id(), 10, 3_000);
        harness.stub().batches().end(expired.id(), "expired");
        Harness.await("both batches settled by the poller", () -> spent("alice") == 6_000);
        long reads = harness.stub().received().stream()
                .filter(r -> r.method().equals("GET") && r.path().startsWith("/v1/batches/"))
                .count();
        assertThat(reads).isPositive(); // the gateway asked; alice never did
    }

    @Test
    @DisplayName("an upload larger than limits.max-file-bytes is refused with 413 in OpenAI's shape, never relayed")
    void uploadTooLarge() throws Exception {
        HttpResponse<String> answer =
                harness.post("/v1/files", "alice-key", "multipart/form-data; boundary=x", "a".repeat(3_000));
        assertThat(answer.statusCode()).isEqualTo(413);
        assertThat(answer.body()).contains("\"error\"");
        assertThat(harness.stub().received()).isEmpty();
    }

    @Test
    @DisplayName("a batch beyond what is left of the tenant's budget is refused before it reaches the upstream")
    void overBudgetRefused() {
        OpenAIClient alice = harness.openAi("alice-key");
        batch(alice, 4, 100_000);
        assertThat(spent("alice")).isEqualTo(4 * DIME);
        assertThatThrownBy(() -> batch(alice, 3, 100_000))
                .isInstanceOf(RateLimitException.class)
                .hasMessageContaining("spend-day");
        assertThat(batchesCreatedUpstream()).isEqualTo(1);
        assertThat(spent("alice")).isEqualTo(4 * DIME);
    }

    @Test
    @DisplayName("a cancelled batch and an expired one give their reservation back")
    void refundedWhenCancelledOrExpired() {
        OpenAIClient alice = harness.openAi("alice-key");
        Batch cancelled = batch(alice, 2, 100_000);
        Batch expired = batch(alice, 1, 100_000);
        assertThat(spent("alice")).isEqualTo(3 * DIME);

        assertThat(alice.batches().cancel(cancelled.id()).status()).isEqualTo(Batch.Status.CANCELLING);
        assertThat(spent("alice")).isEqualTo(3 * DIME);
        harness.stub().batches().end(cancelled.id(), "cancelled");
        alice.batches().retrieve(cancelled.id());
        assertThat(spent("alice")).isEqualTo(DIME);

        harness.stub().batches().end(expired.id(), "expired");
        alice.batches().retrieve(expired.id());
        assertThat(spent("alice")).isZero();
    }

    @Test
    @DisplayName("another tenant can neither read, cancel nor list a batch, nor read its file: 404")
    void onlyTheOwner() throws Exception {
        OpenAIClient alice = harness.openAi("alice-key");
        OpenAIClient carol = harness.openAi("carol-key");
        Batch batch = batch(alice, 1, 1_000);

        assertThatThrownBy(() -> carol.batches().retrieve(batch.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> carol.batches().cancel(batch.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> carol.files().retrieve(batch.inputFileId())).isInstanceOf(NotFoundException.class);
        HttpResponse<String> content = harness.get("/v1/files/" + batch.inputFileId() + "/content", "carol-key");
        assertThat(content.statusCode()).isEqualTo(404);
        assertThat(content.body()).contains("\"error\"");
        assertThat(carol.batches().list().data()).isEmpty();
        assertThat(alice.batches().list().data()).extracting(Batch::id).containsExactly(batch.id());
        assertThat(alice.files().retrieve(batch.inputFileId()).id()).isEqualTo(batch.inputFileId());
    }

    @Test
    @DisplayName("a batch naming a file it does not own is 404; an input file that cannot be metered is 400")
    void badInput() throws Exception {
        HttpResponse<String> unknown = harness.post(
                "/v1/batches",
                "alice-key",
                "application/json",
                "{\"input_file_id\":\"file-nope\",\"endpoint\":\"/v1/chat/completions\",\"completion_window\":\"24h\"}");
        assertThat(unknown.statusCode()).isEqualTo(404);
        HttpResponse<String> missing = harness.post("/v1/batches", "alice-key", "application/json", "{}");
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.body()).contains("input_file_id");
        String file = harness.openAi("alice-key")
                .files()
                .create(FileCreateParams.builder()
                        .file("not json\n".getBytes(StandardCharsets.UTF_8))
                        .purpose(FilePurpose.BATCH)
                        .build())
                .id();
        HttpResponse<String> unreadable = harness.post(
                "/v1/batches",
                "alice-key",
                "application/json",
                "{\"input_file_id\":\"" + file
                        + "\",\"endpoint\":\"/v1/chat/completions\",\"completion_window\":\"24h\"}");
        assertThat(unreadable.statusCode()).isEqualTo(400);
        assertThat(unreadable.body()).contains("invalid_file");
        assertThat(batchesCreatedUpstream()).isZero();
    }
}
