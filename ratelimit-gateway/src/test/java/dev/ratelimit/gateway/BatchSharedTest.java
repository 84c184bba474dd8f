package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.anthropic.client.AnthropicClient;
import com.anthropic.models.messages.batches.BatchCreateParams;
import com.anthropic.models.messages.batches.MessageBatch;
import com.openai.client.OpenAIClient;
import com.openai.models.batches.Batch;
import com.openai.models.batches.BatchCreateParams.CompletionWindow;
import com.openai.models.batches.BatchCreateParams.Endpoint;
import com.openai.models.files.FileCreateParams;
import com.openai.models.files.FilePurpose;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Two gateways on one store settle a batch once, whichever learns that it ended: the reservation's
 * receipt is kept in the store beside the batch's owner. One stub upstream (OpenAI's and Anthropic's)
 * behind both; prices as in {@link BatchTest} and {@link AnthropicBatchTest}.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"REDIS", "CLUSTER"})
class BatchSharedTest {

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    private StubUpstream openAi;
    private AnthropicStub anthropic;
    private Harness first;
    private Harness second;

    /** Two gateways on the store in front of one OpenAI and one Anthropic stub, polling every {@code pollSeconds}. */
    private void start(int pollSeconds) throws Exception {
        openAi = StubUpstream.start();
        anthropic = AnthropicStub.start();
        Path config = directory.resolve("gateway.yaml");
        Files.writeString(
                config, anthropic.moneyConfig("  batch-poll-interval-seconds: " + pollSeconds + "\n", """
                          openai:
                            url: %s
                            api-key: sk-upstream
                            protocol: openai
                            models: ["metered*"]
                        """.formatted(
                                openAi.baseUrl())));
        Map<String, String> environment = Map.of("GATEWAY_CONFIG", config.toString());
        first = Harness.start(store, false, environment);
        second = Harness.start(store, false, environment); // empties the store before the first is used
        second.clock.set(first.clock.instant());
    }

    @AfterEach
    void stop() {
        for (AutoCloseable open : new AutoCloseable[] {first, second, openAi, anthropic}) {
            try {
                if (open != null) {
                    open.close();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static Batch openAiBatch(OpenAIClient client) {
        String line = "{\"custom_id\":\"r%d\",\"method\":\"POST\",\"url\":\"/v1/chat/completions\",\"body\":"
                + "{\"model\":\"metered\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                + "\"max_completion_tokens\":100000}}\n";
        String file = client.files()
                .create(FileCreateParams.builder()
                        .file((line.formatted(0) + line.formatted(1)).getBytes(StandardCharsets.UTF_8))
                        .purpose(FilePurpose.BATCH)
                        .build())
                .id();
        return client.batches()
                .create(com.openai.models.batches.BatchCreateParams.builder()
                        .inputFileId(file)
                        .endpoint(Endpoint.V1_CHAT_COMPLETIONS)
                        .completionWindow(CompletionWindow._24H)
                        .build());
    }

    private static AnthropicClient anthropic(Harness via) {
        return via.anthropic("carol-key");
    }

    private static MessageBatch anthropicBatch(AnthropicClient client) {
        return client.messages()
                .batches()
                .create(BatchCreateParams.builder()
                        .addRequest(BatchCreateParams.Request.builder()
                                .customId("r0")
                                .params(BatchCreateParams.Request.Params.builder()
                                        .model("claude-money-1")
                                        .maxTokens(40_000)
                                        .addUserMessage("hi")
                                        .build())
                                .build())
                        .build());
    }

    /** The batch settlements a gateway made, committed or cancelled. */
    private static double settled(Harness gateway) {
        try {
            return gateway.metric("gateway_settlements_total", "ending", "batch_completed")
                    + gateway.metric("gateway_settlements_total", "ending", "batch_ended");
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    @DisplayName("a batch admitted on gateway A is settled by its owner's GET on gateway B, charged exactly once")
    void settledByAnotherGateway() throws Exception {
        start(3_600);
        OpenAIClient onA = first.openAi("alice-key");
        OpenAIClient onB = second.openAi("alice-key");
        Batch batch = openAiBatch(onA);
        assertThat(first.used("alice", "spend-day")).isEqualTo(200_000); // 200,000 output tokens at $1 per million
        MessageBatch message = anthropicBatch(anthropic(first));
        long carolReserved = first.used("carol", "spend-day");
        assertThat(carolReserved).isGreaterThan(100_000);

        openAi.batches().complete(batch.id(), 10, 3_000);
        anthropic.batches().succeed(message.id(), 1_000, 10_000, 800, 10_000);
        assertThat(onB.batches().retrieve(batch.id()).status()).isEqualTo(Batch.Status.COMPLETED);
        assertThat(anthropic(second).messages().batches().retrieve(message.id()).processingStatus())
                .isEqualTo(MessageBatch.ProcessingStatus.ENDED);
        assertThat(second.used("alice", "spend-day")).isEqualTo(6_000);
        assertThat(second.used("carol", "spend-day")).isEqualTo(26_500);

        // the owner reads both again on A, which admitted them: nothing more is settled
        onA.batches().retrieve(batch.id());
        anthropic(first).messages().batches().retrieve(message.id());
        assertThat(first.used("alice", "spend-day")).isEqualTo(6_000);
        assertThat(first.used("carol", "spend-day")).isEqualTo(26_500);
        assertThat(settled(first)).as("gateway A settled nothing").isZero();
        assertThat(settled(second)).as("gateway B settled each batch once").isEqualTo(2);
    }

    @Test
    @DisplayName("both gateways poll, one claims each batch per interval: a batch that ended is settled once")
    void oneOfTwoPollersSettles() throws Exception {
        start(1);
        Batch batch = openAiBatch(first.openAi("alice-key"));
        MessageBatch message = anthropicBatch(anthropic(second));
        openAi.batches().complete(batch.id(), 10, 3_000);
        anthropic.batches().succeed(message.id(), 1_000, 10_000, 800, 10_000);
        Harness.await(
                "both batches settled by a poller",
                () -> first.used("alice", "spend-day") == 6_000 && first.used("carol", "spend-day") == 26_500);
        Thread.sleep(2_500); // two more poll intervals on each gateway: nothing is left to settle
        assertThat(settled(first) + settled(second)).isEqualTo(2);
        assertThat(first.used("alice", "spend-day")).isEqualTo(6_000);
        assertThat(first.used("carol", "spend-day")).isEqualTo(26_500);
    }
}
