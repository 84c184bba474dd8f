package dev.ratelimit.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.testsupport.openai.OpenAiStub;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.annotation.Tool;
import reactor.core.Disposable;

/**
 * Spring AI's own {@link OpenAiChatModel} behind a {@link ChatClient} with the advisor, against {@link
 * OpenAiStub}: what reaches the stub and what each ending leaves in the user's windows and the model's
 * shared budget. Subclasses supply the store.
 */
abstract class RateLimitAdvisorContract {

    private static final String MODEL = "gpt-4o-mini";
    private static final Window REQUESTS = Window.of(10, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(1_000_000, Duration.ofHours(1));
    private static final Tier TIER = Tier.of("free", REQUESTS, TOKENS);
    private static final TierPolicy TIERS =
            TierPolicy.builder().tier(TIER).defaultTier("free").build();

    private OpenAiStub stub;
    private RateLimiter limiter;
    private String user;
    /** The model's upstream cap; named per test, as the Redis of a test class outlives its tests. */
    private SharedBudget modelCap;

    /** Returns a limiter over a fresh store; called once per test. */
    abstract RateLimiter newLimiter() throws Exception;

    @BeforeEach
    void start() throws Exception {
        stub = new OpenAiStub();
        limiter = newLimiter();
        user = "user-" + UUID.randomUUID();
        modelCap =
                SharedBudget.of("openai/" + MODEL + "/" + user, Window.tokens("tpm", 5_000_000, Duration.ofMinutes(1)));
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private RateLimitAdvisor.Builder advisor() {
        return RateLimitAdvisor.builder(limiter, TIERS)
                .endUserResolver(request -> new EndUser(user, null))
                .modelBudgets(Map.of(MODEL, modelCap));
    }

    private ChatClient chatClient(RateLimitAdvisor advisor, boolean streamUsage) {
        OpenAiChatModel model = OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder()
                        .baseUrl(stub.baseUrl())
                        .apiKey("test")
                        .model(MODEL)
                        .maxRetries(0)
                        .streamUsage(streamUsage)
                        .build())
                .build();
        return ChatClient.builder(model).defaultAdvisors(advisor).build();
    }

    private ChatClient chatClient() {
        return chatClient(advisor().build(), true);
    }

    private long used(Window window) {
        return used(user, window);
    }

    private long used(String id, Window window) {
        return limiter.usage(id, TIER).stream()
                .filter(usage -> usage.window().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    private long modelCapUsed() {
        return limiter.usage(modelCap).get(0).used();
    }

    /** A user message's estimate: the reply priming, the message's overhead and its text. */
    private static long prompt(String text) {
        return TokenCounts.REPLY_PRIMING + TokenCounts.PER_MESSAGE + count(text);
    }

    private static long count(String text) {
        return TokenCounts.text(TokenCounts.encodingFor(MODEL), text);
    }

    /** Waits for a settlement that nobody waits for (a cancelled stream's), up to 30 seconds. */
    private static void eventually(LongSupplier actual, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (actual.getAsLong() != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(actual.getAsLong()).isEqualTo(expected);
    }

    @Test
    @DisplayName("a plain call settles the user's tokens and the model's cap to the stub's usage")
    void plainCallSettlesToUsage() {
        String answer = chatClient().prompt("hi").call().content();

        assertThat(answer).isEqualTo(OpenAiStub.REPLY);
        assertThat(stub.calls()).isEqualTo(1);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(OpenAiStub.TOTAL_TOKENS);
        assertThat(modelCapUsed()).isEqualTo(OpenAiStub.TOTAL_TOKENS);
    }

    @Test
    @DisplayName("without reported usage a plain call settles to the counted prompt and output")
    void plainCallWithoutUsageSettlesToCounted() {
        stub.reportUsage(false);

        chatClient().prompt("hi").call().content();

        assertThat(used(TOKENS)).isEqualTo(prompt("hi") + count(OpenAiStub.REPLY));
    }

    @Test
    @DisplayName("the user named in the advisor parameter is charged, not the resolver's")
    void userParameterWins() {
        String other = "other-" + UUID.randomUUID();

        chatClient()
                .prompt("hi")
                .advisors(a -> a.param(RateLimitAdvisor.USER, other))
                .call()
                .content();

        assertThat(used(REQUESTS)).isZero();
        assertThat(used(other, REQUESTS)).isEqualTo(1);
    }

    @Test
    @DisplayName("a streamed call settles to the usage of the stream's last chunk (Spring AI asks OpenAI for it)")
    void streamedCallSettlesToUsage() {
        List<String> parts =
                chatClient().prompt("hi").stream().content().collectList().block(Duration.ofSeconds(30));

        assertThat(String.join("", parts)).isEqualTo(OpenAiStub.REPLY);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(OpenAiStub.TOTAL_TOKENS);
        assertThat(modelCapUsed()).isEqualTo(OpenAiStub.TOTAL_TOKENS);
    }

    @Test
    @DisplayName("a stream without usage (streamUsage(false)) settles to the counted prompt and output")
    void streamWithoutUsageSettlesToCounted() {
        chatClient(advisor().build(), false).prompt("hi").stream().content().blockLast(Duration.ofSeconds(30));

        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(prompt("hi") + count(OpenAiStub.REPLY));
    }

    @Test
    @DisplayName("20 concurrent calls of one user with 10 allowed: exactly 10 reach the stub, 10 are refused")
    void concurrentCallsAdmitExactlyTheLimit() throws Exception {
        ChatClient chat = chatClient();
        ExecutorService pool = Executors.newFixedThreadPool(20);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<String>> results = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                results.add(pool.submit(() -> {
                    go.await();
                    return chat.prompt("hi").call().content();
                }));
            }
            go.countDown();
            int answered = 0;
            int refused = 0;
            for (Future<String> result : results) {
                try {
                    assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(OpenAiStub.REPLY);
                    answered++;
                } catch (ExecutionException e) {
                    assertThat(e.getCause()).isInstanceOf(RateLimitExceededException.class);
                    Decision decision = ((RateLimitExceededException) e.getCause()).decision();
                    assertThat(decision.allowed()).isFalse();
                    assertThat(decision.window()).isEqualTo(REQUESTS);
                    assertThat(decision.retryAfter()).isPositive();
                    refused++;
                }
            }
            assertThat(answered).isEqualTo(10);
            assertThat(refused).isEqualTo(10);
            assertThat(stub.calls()).isEqualTo(10);
            assertThat(used(TOKENS)).isEqualTo(10L * OpenAiStub.TOTAL_TOKENS);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A tool: the model asks for it once, then answers. */
    static final class Clock {
        @Tool(description = "tells the time")
        String time() {
            return "noon";
        }
    }

    @Test
    @DisplayName("a tool-calling loop calls the model twice and is charged twice")
    void toolLoopIsChargedPerModelCall() {
        String answer = chatClient()
                .prompt("what time is it?")
                .tools(new Clock())
                .call()
                .content();

        assertThat(answer).isEqualTo(OpenAiStub.REPLY);
        assertThat(stub.calls()).isEqualTo(2);
        assertThat(used(REQUESTS)).isEqualTo(2);
        assertThat(used(TOKENS)).isEqualTo(2L * OpenAiStub.TOTAL_TOKENS);
        assertThat(modelCapUsed()).isEqualTo(2L * OpenAiStub.TOTAL_TOKENS);
    }

    @Test
    @DisplayName("a streamed tool-calling loop calls the model twice and is charged twice")
    void streamedToolLoopIsChargedPerModelCall() {
        List<String> parts = chatClient().prompt("what time is it?").tools(new Clock()).stream()
                .content()
                .collectList()
                .block(Duration.ofSeconds(30));

        assertThat(String.join("", parts)).isEqualTo(OpenAiStub.REPLY);
        assertThat(stub.calls()).isEqualTo(2);
        assertThat(used(REQUESTS)).isEqualTo(2);
        assertThat(used(TOKENS)).isEqualTo(2L * OpenAiStub.TOTAL_TOKENS);
    }

    @Test
    @DisplayName("a 500 from the model cancels the reservation: the request and tokens come back")
    void modelErrorCancels() {
        stub.failWith(500);

        assertThatThrownBy(() -> chatClient().prompt("hi").call().content())
                .isNotInstanceOf(RateLimitExceededException.class);

        assertThat(stub.calls()).isEqualTo(1);
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
        assertThat(modelCapUsed()).isZero();
    }

    @Test
    @DisplayName("a stream that fails with a 500 before any output cancels the reservation")
    void streamErrorCancels() {
        stub.failWith(500);

        assertThatThrownBy(() -> chatClient().prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isNotInstanceOf(RateLimitExceededException.class);

        assertThat(stub.calls()).isEqualTo(1);
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
        assertThat(modelCapUsed()).isZero();
    }

    @Test
    @DisplayName("a stream the caller cancels commits the counted prompt and the output produced")
    void cancelledStreamCommitsWhatWasProduced() throws Exception {
        CountDownLatch held = stub.holdStreamsAfterFirstChunk();
        CompletableFuture<String> first = new CompletableFuture<>();
        try {
            Disposable subscription = chatClient().prompt("hi").stream()
                    .chatClientResponse()
                    .subscribe(
                            response -> {
                                String text = text(response.chatResponse());
                                if (text != null) {
                                    first.complete(text);
                                }
                            },
                            first::completeExceptionally);

            assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(OpenAiStub.STREAMED_PARTS[0]);
            // the caller goes away; on another thread, as the OpenAI client's close() waits for the
            // (held) stream to end, after the cancellation has passed the advisor
            CompletableFuture.runAsync(subscription::dispose);
            eventually(() -> used(TOKENS), prompt("hi") + count(OpenAiStub.STREAMED_PARTS[0]));
            assertThat(used(REQUESTS)).isEqualTo(1);
        } finally {
            held.countDown();
        }
    }

    private static String text(ChatResponse response) {
        return response == null || response.getResult() == null
                ? null
                : response.getResult().getOutput().getText();
    }

    @Test
    @DisplayName("a call larger than the token window is refused as too large and never reaches the model")
    void tooLargeIsRefusedWithoutCallingTheModel() {
        Tier small = Tier.of("free", REQUESTS, Window.tokens(500, Duration.ofMinutes(1)));
        RateLimitAdvisor tight = RateLimitAdvisor.builder(
                        limiter,
                        TierPolicy.builder().tier(small).defaultTier("free").build())
                .endUserResolver(request -> new EndUser(user, null))
                .defaultMaxTokens(1_000)
                .build();

        assertThatThrownBy(() -> chatClient(tight, true).prompt("hi").call().content())
                .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                    assertThat(e.decision().tooLarge()).isTrue();
                    assertThat(e.userId()).isEqualTo(user);
                });
        assertThatThrownBy(() ->
                        chatClient(tight, true).prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(stub.calls()).isZero();
    }

    @Test
    @DisplayName("the call's maxTokens option is what is reserved beyond the prompt")
    void maxTokensOptionIsReserved() {
        Tier small = Tier.of("free", REQUESTS, Window.tokens(500, Duration.ofMinutes(1)));
        RateLimitAdvisor tight = RateLimitAdvisor.builder(
                        limiter,
                        TierPolicy.builder().tier(small).defaultTier("free").build())
                .endUserResolver(request -> new EndUser(user, null))
                .defaultMaxTokens(1_000)
                .build();

        String answer = chatClient(tight, true)
                .prompt("hi")
                .options(OpenAiChatOptions.builder().maxTokens(100))
                .call()
                .content();

        assertThat(answer).isEqualTo(OpenAiStub.REPLY);
        assertThat(stub.calls()).isEqualTo(1);
    }

    @Test
    @DisplayName("a call with no end user fails before the model is called")
    void missingUserFails() {
        RateLimitAdvisor anonymous = RateLimitAdvisor.builder(limiter, TIERS).build();

        assertThatThrownBy(() -> chatClient(anonymous, true).prompt("hi").call().content())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RateLimitAdvisor.USER);
        assertThat(stub.calls()).isZero();
    }
}
