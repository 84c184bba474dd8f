package dev.ratelimit.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import dev.langchain4j.model.googleai.GoogleAiGeminiChatModel;
import dev.langchain4j.model.googleai.GoogleAiGeminiStreamingChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.service.AiServices;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.fakemodel.Failure;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.fakemodel.Reply;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.genai.TokenUsage;
import dev.ratelimit.genai.UnpricedModelException;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's own OpenAI models, wrapped, against the {@link FakeModel}: what reaches the model and what
 * each ending leaves in the user's windows and the model's shared budget. Subclasses supply the store.
 */
abstract class RateLimitedModelsContract {

    private static final String MODEL = "gpt-4o-mini";
    private static final String GEMINI = "gemini-2.5-flash";
    private static final Window REQUESTS = Window.of(10, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(1_000_000, Duration.ofHours(1));
    private static final Tier TIER = Tier.of("free", REQUESTS, TOKENS);
    /** A day's spend of one dollar, in micro-dollars. */
    private static final Window SPEND = Window.of("spend-day", 1_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS);

    private static final Tier METERED = Tier.of("metered", REQUESTS, TOKENS, SPEND);
    /**
     * $3 per million fresh input tokens, $1 cached, $10 output: micro-dollars per token, so the
     * fake model's 11 prompt and 7 completion tokens cost 11 * 3 + 7 * 10 = 103 micro-dollars.
     */
    private static final ModelPrice PRICE = ModelPrice.perMillion("3", "1", "10");

    private static final PriceTable PRICES = PriceTable.of(Map.of(MODEL, PRICE, GEMINI, PRICE));

    private FakeModel stub;
    private RateLimiter limiter;
    private String user;
    private LangChain4jRateLimiter rateLimit;
    /** The model's upstream cap; named per test, as the Redis of a test class outlives its tests. */
    private SharedBudget modelCap;

    /** Returns a limiter over a fresh store; called once per test. */
    abstract RateLimiter newLimiter() throws Exception;

    @BeforeEach
    void start() throws Exception {
        stub = FakeModel.start();
        limiter = newLimiter();
        user = "user-" + UUID.randomUUID();
        modelCap =
                SharedBudget.of("openai/" + MODEL + "/" + user, Window.tokens("tpm", 5_000_000, Duration.ofMinutes(1)));
        rateLimit = LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> TIER)
                .modelBudgets(Map.of(MODEL, modelCap))
                .build();
    }

    @AfterEach
    void stop() throws Exception {
        stub.close();
    }

    private ChatModel chatModel() {
        return OpenAiChatModel.builder()
                .baseUrl(stub.baseUrl())
                .apiKey("test")
                .modelName(MODEL)
                .maxRetries(0)
                .build();
    }

    private StreamingChatModel streamingModel() {
        return OpenAiStreamingChatModel.builder()
                .baseUrl(stub.baseUrl())
                .apiKey("test")
                .modelName(MODEL)
                .build();
    }

    private long used(Window window) {
        return limiter.usage(user, TIER).stream()
                .filter(usage -> usage.window().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    private long modelCapUsed() {
        return limiter.usage(modelCap).get(0).used();
    }

    @Test
    @DisplayName("a plain call settles the user's tokens and the model's cap to the model's usage")
    void plainCallSettlesToUsage() {
        String answer = rateLimit.wrap(chatModel()).chat("hi");

        assertThat(answer).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(stub.calls().size()).isEqualTo(1);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
        assertThat(modelCapUsed()).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("without reported usage a plain call settles to the counted prompt and output")
    void plainCallWithoutUsageSettlesToCounted() {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.noUsage());
        ChatRequest request =
                ChatRequest.builder().messages(UserMessage.from("hi")).build();

        rateLimit.wrap(chatModel()).chat(request);

        var counts = TokenCounter.countsFor(MODEL);
        long expected =
                TokenCounter.prompt(counts, request.messages(), List.of()) + counts.count(FakeModel.DEFAULT_TEXT);
        assertThat(used(TOKENS)).isEqualTo(expected);
    }

    @Test
    @DisplayName("the user named in the call's ChatRequestOptions is charged, not the resolver's")
    void userAttributeWins() {
        String other = "other-" + UUID.randomUUID();
        rateLimit
                .wrap(chatModel())
                .chat(
                        ChatRequest.builder().messages(UserMessage.from("hi")).build(),
                        ChatRequestOptions.builder()
                                .addListenerAttribute(LangChain4jRateLimiter.USER_ATTRIBUTE, other)
                                .build());

        assertThat(used(REQUESTS)).isZero();
        assertThat(limiter.usage(other, TIER).get(0).used()).isEqualTo(1);
    }

    @Test
    @DisplayName(
            "given a MeterRegistry, plain and streamed calls record OpenTelemetry's GenAI token usage and duration")
    void genAiMetrics() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        LangChain4jRateLimiter metered = LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> TIER)
                .meterRegistry(registry)
                .build();
        metered.wrap(chatModel()).chat("hi");
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        metered.wrapStreaming(streamingModel()).chat("hi", handler(done));
        done.get(30, TimeUnit.SECONDS);

        for (String type : List.of("input", "output")) {
            DistributionSummary tokens = registry.get("gen_ai.client.token.usage")
                    .tags("gen_ai.token.type", type, "gen_ai.request.model", MODEL, "gen_ai.provider.name", "openai")
                    .summary();
            assertThat(tokens.count()).isEqualTo(2);
            assertThat(tokens.totalAmount())
                    .isEqualTo(2.0
                            * (type.equals("input")
                                    ? FakeModel.DEFAULT_USAGE.input()
                                    : FakeModel.DEFAULT_USAGE.output()));
        }
        assertThat(registry.get("gen_ai.client.operation.duration").timer().count())
                .isEqualTo(2);
    }

    @Test
    @DisplayName("a streamed call settles the user's tokens to the usage of the stream's last chunk")
    void streamedCallSettlesToUsage() throws Exception {
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        rateLimit.wrapStreaming(streamingModel()).chat("hi", handler(done));

        ChatResponse response = done.get(30, TimeUnit.SECONDS);
        assertThat(response.aiMessage().text()).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(response.tokenUsage().totalTokenCount()).isEqualTo(FakeModel.DEFAULT_USAGE.total());
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
        assertThat(modelCapUsed()).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("20 concurrent calls of one user with 10 allowed: exactly 10 reach the stub, 10 are refused")
    void concurrentCallsAdmitExactlyTheLimit() throws Exception {
        ChatModel model = rateLimit.wrap(chatModel());
        ExecutorService pool = Executors.newFixedThreadPool(20);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<String>> results = new ArrayList<>();
        try {
            for (int i = 0; i < 20; i++) {
                results.add(pool.submit(() -> {
                    go.await();
                    return model.chat("hi");
                }));
            }
            go.countDown();
            int answered = 0;
            int refused = 0;
            for (Future<String> result : results) {
                try {
                    assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(FakeModel.DEFAULT_TEXT);
                    answered++;
                } catch (java.util.concurrent.ExecutionException e) {
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
            assertThat(stub.calls().size()).isEqualTo(10);
            assertThat(used(TOKENS)).isEqualTo(10L * FakeModel.DEFAULT_USAGE.total());
        } finally {
            pool.shutdownNow();
        }
    }

    /** A tool for the AI Service: the model asks for it once, then answers. */
    static final class Clock {
        @Tool("tells the time")
        String time() {
            return "noon";
        }
    }

    interface Assistant {
        String chat(String message);
    }

    @Test
    @DisplayName("an AI Service's tool-calling loop calls the model twice and is charged twice")
    void toolLoopIsChargedPerModelCall() {
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(rateLimit.wrap(chatModel()))
                .tools(new Clock())
                .build();

        assertThat(assistant.chat("what time is it?")).isEqualTo(FakeModel.DEFAULT_TEXT);

        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(used(REQUESTS)).isEqualTo(2);
        assertThat(used(TOKENS)).isEqualTo(2L * FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("a 500 from the model cancels the reservation: the request and tokens come back")
    void modelErrorCancels() {
        stub.answerByDefault(Failure.status(500));

        assertThatThrownBy(() -> rateLimit.wrap(chatModel()).chat("hi"))
                .isNotInstanceOf(RateLimitExceededException.class);

        assertThat(stub.calls().size()).isEqualTo(1);
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
        assertThat(modelCapUsed()).isZero();
    }

    @Test
    @DisplayName("a stream that fails before any output cancels the reservation")
    void streamErrorBeforeOutputCancels() throws Exception {
        stub.answerByDefault(Failure.status(500));
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();

        rateLimit.wrapStreaming(streamingModel()).chat("hi", handler(done));

        assertThat(done).failsWithin(Duration.ofSeconds(30));
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
    }

    @Test
    @DisplayName("a stream broken off after output settles to the counted prompt and the output produced")
    void brokenStreamCommitsWhatWasProduced() throws Exception {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.at(1, Reply.Then.BREAK));
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        ChatRequest request =
                ChatRequest.builder().messages(UserMessage.from("hi")).build();

        rateLimit.wrapStreaming(streamingModel()).chat(request, handler(done));

        // LangChain4j 1.19's OpenAI client ends a broken-off stream as a response without usage (no
        // finish reason); an error would settle to the same count
        done.handle((response, error) -> null).get(30, TimeUnit.SECONDS);
        var counts = TokenCounter.countsFor(MODEL);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS))
                .isEqualTo(TokenCounter.prompt(counts, request.messages(), List.of()) + counts.count("Hello"));
    }

    @Test
    @DisplayName("a stream the caller cancels commits the counted prompt and the output produced")
    void cancelledStreamCommitsWhatWasProduced() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.at(1, held, Reply.Then.CONTINUE));
        CompletableFuture<String> cancelledAfter = new CompletableFuture<>();
        ChatRequest request =
                ChatRequest.builder().messages(UserMessage.from("hi")).build();
        try {
            rateLimit.wrapStreaming(streamingModel()).chat(request, new StreamingChatResponseHandler() {
                @Override
                public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
                    context.streamingHandle().cancel();
                    cancelledAfter.complete(partial.text());
                }

                @Override
                public void onCompleteResponse(ChatResponse response) {
                    cancelledAfter.completeExceptionally(new AssertionError("completed: " + response));
                }

                @Override
                public void onError(Throwable error) {
                    cancelledAfter.completeExceptionally(error);
                }
            });

            String produced = cancelledAfter.get(30, TimeUnit.SECONDS);
            var counts = TokenCounter.countsFor(MODEL);
            long expected = TokenCounter.prompt(counts, request.messages(), List.of()) + counts.count(produced);
            assertThat(produced).isEqualTo("Hello");
            assertThat(used(REQUESTS)).isEqualTo(1);
            assertThat(used(TOKENS)).isEqualTo(expected);
        } finally {
            held.countDown();
        }
    }

    @Test
    @DisplayName(
            "a call larger than the token window is refused as too large, through an AI Service too, and never reaches the model")
    void tooLargeIsRefusedWithoutCallingTheModel() {
        LangChain4jRateLimiter tight = tight();

        assertThatThrownBy(() -> tight.wrap(chatModel()).chat("hi"))
                .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                    assertThat(e.decision().tooLarge()).isTrue();
                    assertThat(e.userId()).isEqualTo(user);
                });
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(tight.wrap(chatModel()))
                .build();
        assertThatThrownBy(() -> assistant.chat("hi")).isInstanceOf(RateLimitExceededException.class);
        assertThat(stub.calls().size()).isZero();
    }

    /** A user whose token window (500) is smaller than a call's default reservation (1,000 output tokens). */
    private LangChain4jRateLimiter tight() {
        Tier small = Tier.of("small", REQUESTS, Window.tokens(500, Duration.ofMinutes(1)));
        return LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> small)
                .defaultMaxOutputTokens(1_000)
                .build();
    }

    @Test
    @DisplayName("a call with no end user fails before the model is called")
    void missingUserFails() {
        LangChain4jRateLimiter anonymous =
                LangChain4jRateLimiter.builder(limiter).tier(id -> TIER).build();

        assertThatThrownBy(() -> anonymous.wrap(chatModel()).chat("hi"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(LangChain4jRateLimiter.USER_ATTRIBUTE);
        assertThat(stub.calls().size()).isZero();
    }

    private static StreamingChatResponseHandler handler(CompletableFuture<ChatResponse> done) {
        return new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partialResponse) {}

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        };
    }

    /** The models of a user on the metered tier (a spend window), with {@link #PRICES}. */
    private LangChain4jRateLimiter metered() {
        return metered(METERED, PRICES);
    }

    private LangChain4jRateLimiter metered(Tier tier, PriceTable prices) {
        return LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> tier)
                .modelBudgets(Map.of(MODEL, modelCap, GEMINI, modelCap))
                .priceTable(prices)
                .build();
    }

    private long spent() {
        return spent(METERED, SPEND);
    }

    /** Asserts the user's requests, tokens (the model's cap holds the same) and micro-dollars spent. */
    private void assertCharged(long requests, long tokens, long micros) {
        assertThat(List.of(used(REQUESTS), used(TOKENS), modelCapUsed(), spent()))
                .containsExactly(requests, tokens, tokens, micros);
    }

    private long spent(Tier tier, Window spend) {
        return limiter.usage(user, tier).stream()
                .filter(usage -> usage.window().equals(spend))
                .findFirst()
                .orElseThrow()
                .used();
    }

    private static long prompt(ChatRequest request) {
        return TokenCounter.prompt(TokenCounter.countsFor(MODEL), request.messages(), List.of());
    }

    private static ChatRequest hi() {
        return ChatRequest.builder().messages(UserMessage.from("hi")).build();
    }

    @Test
    @DisplayName("money: a priced call is charged the cost of the model's usage in the spend window")
    void spendIsChargedTheCostOfTheUsage() {
        metered().wrap(chatModel()).chat("hi");

        assertThat(spent()).isEqualTo(103); // 11 * $3 + 7 * $10 per million tokens
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
        assertThat(used(REQUESTS)).isEqualTo(1);
    }

    @Test
    @DisplayName("money: cached prompt tokens (OpenAiTokenUsage's inputTokensDetails) are charged at the cached price")
    void cachedTokensAreChargedAtTheCachedPrice() {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.usage(FakeModel.DEFAULT_USAGE.withCachedInput(5)));

        metered().wrap(chatModel()).chat("hi");

        assertThat(spent()).isEqualTo(6 * 3 + 5 + 7 * 10); // 6 fresh, 5 cached, 7 output
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("money: a streamed call is charged the cost of the stream's reported usage, cached tokens included")
    void streamedSpendIsChargedTheCostOfTheUsage() throws Exception {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.usage(FakeModel.DEFAULT_USAGE.withCachedInput(5)));
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();

        metered().wrapStreaming(streamingModel()).chat("hi", handler(done));

        done.get(30, TimeUnit.SECONDS);
        assertThat(spent()).isEqualTo(6 * 3 + 5 + 7 * 10);
    }

    @Test
    @DisplayName("money: without reported usage the counted prompt and output are charged at their prices")
    void spendWithoutUsageIsTheCostOfTheCount() {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.noUsage());

        metered().wrap(chatModel()).chat(hi());

        long output = TokenCounter.text(TokenCounter.countsFor(MODEL), FakeModel.DEFAULT_TEXT);
        assertThat(spent()).isEqualTo(PRICE.costMicros(TokenUsage.of(prompt(hi()), output)));
    }

    @Test
    @DisplayName(
            "money: the worst case is reserved first: a call whose worst case exceeds what is left is refused before the model, though its cost would fit")
    void worstCaseIsReservedFirst() {
        long worstCase = PRICE.worstCaseMicros(prompt(hi()), LangChain4jRateLimiter.DEFAULT_MAX_OUTPUT_TOKENS);
        Window tight = Window.of("spend-day", worstCase + 50, Duration.ofDays(1), Window.Unit.USD_MICROS);
        Tier tightTier = Tier.of("metered", REQUESTS, TOKENS, tight);
        LangChain4jRateLimiter rateLimit = metered(tightTier, PRICES);
        ChatModel model = rateLimit.wrap(chatModel());
        model.chat(hi()); // admitted at its worst case, settled to 103

        assertThatThrownBy(() -> model.chat(hi()))
                .isInstanceOfSatisfying(
                        RateLimitExceededException.class,
                        e -> assertThat(e.decision().window()).isEqualTo(tight));
        assertThatThrownBy(
                        () -> rateLimit.wrapStreaming(streamingModel()).chat(hi(), handler(new CompletableFuture<>())))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(stub.calls().size()).isEqualTo(1);
        // the same call with a smaller maximum fits: its worst case is what decides
        model.chat(ChatRequest.builder()
                .messages(UserMessage.from("hi"))
                .maxOutputTokens(100)
                .build());
        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(spent(tightTier, tight)).isEqualTo(2 * 103);
    }

    @Test
    @DisplayName(
            "money: a held stream holds its worst case; cancelled, it keeps the cost of what was produced and gives the rest back")
    void cancelledStreamGivesTheRestOfTheWorstCaseBack() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.at(1, held, Reply.Then.CONTINUE));
        CompletableFuture<StreamingHandle> first = new CompletableFuture<>();
        try {
            metered().wrapStreaming(streamingModel()).chat(hi(), new StreamingChatResponseHandler() {
                @Override
                public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
                    first.complete(context.streamingHandle());
                }

                @Override
                public void onCompleteResponse(ChatResponse response) {
                    first.completeExceptionally(new AssertionError("completed: " + response));
                }

                @Override
                public void onError(Throwable error) {
                    first.completeExceptionally(error);
                }
            });
            StreamingHandle handle = first.get(30, TimeUnit.SECONDS);
            assertThat(spent())
                    .isEqualTo(PRICE.worstCaseMicros(prompt(hi()), LangChain4jRateLimiter.DEFAULT_MAX_OUTPUT_TOKENS));

            handle.cancel();

            long produced = TokenCounter.text(TokenCounter.countsFor(MODEL), "Hello");
            assertThat(spent()).isEqualTo(PRICE.costMicros(TokenUsage.of(prompt(hi()), produced)));
        } finally {
            held.countDown();
        }
    }

    @Test
    @DisplayName("money: a 500 from the model gives the whole worst case back, plain and streamed")
    void modelErrorGivesTheMoneyBack() throws Exception {
        stub.answerByDefault(Failure.status(500));
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();

        assertThatThrownBy(() -> metered().wrap(chatModel()).chat("hi"))
                .isNotInstanceOf(RateLimitExceededException.class);
        metered().wrapStreaming(streamingModel()).chat("hi", handler(done));
        assertThat(done).failsWithin(Duration.ofSeconds(30));

        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(spent()).isZero();
        assertThat(used(REQUESTS)).isZero();
    }

    @Test
    @DisplayName("money: an AI Service's tool-calling loop of two model calls is charged twice")
    void toolLoopIsChargedTwice() {
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(metered().wrap(chatModel()))
                .tools(new Clock())
                .build();

        assistant.chat("what time is it?");

        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(spent()).isEqualTo(2 * 103);
    }

    @Test
    @DisplayName(
            "money: a model without a price under a spend window throws UnpricedModelException, plain, streamed and through an AI Service; the model is not called")
    void unpricedModelUnderASpendWindowIsNotCalled() {
        LangChain4jRateLimiter otherPrices = metered(METERED, PriceTable.of(Map.of("gpt-4o", PRICE)));

        assertThatThrownBy(() -> otherPrices.wrap(chatModel()).chat("hi"))
                .isInstanceOfSatisfying(
                        UnpricedModelException.class, e -> assertThat(e.model()).isEqualTo(MODEL));
        assertThatThrownBy(() ->
                        otherPrices.wrapStreaming(streamingModel()).chat("hi", handler(new CompletableFuture<>())))
                .isInstanceOf(UnpricedModelException.class);
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(otherPrices.wrap(chatModel()))
                .build();
        assertThatThrownBy(() -> assistant.chat("hi")).isInstanceOf(UnpricedModelException.class);
        LangChain4jRateLimiter noPrices = LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> METERED)
                .build();
        assertThatThrownBy(() -> noPrices.wrap(chatModel()).chat("hi"))
                .as("no price table at all")
                .isInstanceOf(UnpricedModelException.class);

        assertThat(stub.calls().size()).isZero();
        assertThat(used(REQUESTS)).isZero();
        assertThat(spent()).isZero();
        // without a spend window, the unpriced model is called as before
        LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> TIER)
                .priceTable(PriceTable.of(Map.of("gpt-4o", PRICE)))
                .build()
                .wrap(chatModel())
                .chat("hi");
        assertThat(stub.calls().size()).isEqualTo(1);
    }

    /**
     * LangChain4j's own Gemini models ({@link GoogleAiGeminiChatModel}, {@link
     * GoogleAiGeminiStreamingChatModel}) against the {@link FakeModel}, on a metered tier: charged, then
     * settled to the usage Gemini reports, cached content at the cached price and thinking tokens at
     * the output price.
     */
    @Nested
    @DisplayName("Gemini")
    class Gemini {

        final FakeModel gemini = FakeModel.start();

        @AfterEach
        void stopGemini() {
            gemini.close();
        }

        private ChatModel geminiModel() {
            return GoogleAiGeminiChatModel.builder()
                    .baseUrl(gemini.geminiBaseUrl())
                    .apiKey("test")
                    .modelName(GEMINI)
                    .maxRetries(0)
                    .build();
        }

        private StreamingChatModel geminiStreamingModel() {
            return GoogleAiGeminiStreamingChatModel.builder()
                    .baseUrl(gemini.geminiBaseUrl())
                    .apiKey("test")
                    .modelName(GEMINI)
                    .build();
        }

        @Test
        @DisplayName("a plain call settles tokens, the model's cap and the spend to Gemini's usage")
        void plainCallSettlesToUsage() {
            String answer = metered().wrap(geminiModel()).chat("hi");

            assertThat(answer).isEqualTo(FakeModel.DEFAULT_TEXT);
            assertThat(gemini.calls().size()).isEqualTo(1);
            assertCharged(1, 11 + 7, 11 * 3 + 7 * 10); // 11 prompt, 7 candidates
        }

        @Test
        @DisplayName("cached content is charged at the cached price, thinking tokens at the output price")
        void cachedAndThinkingTokensArePricedByKind() {
            gemini.answerByDefault(FakeModel.DEFAULT_REPLY.usage(
                    FakeModel.DEFAULT_USAGE.withCachedInput(5).withThoughts(4)));

            metered().wrap(geminiModel()).chat("hi");

            // 11 prompt (5 of them cached), 7 candidates, 4 thoughts
            assertCharged(1, 11 + 7 + 4, 6 * 3 + 5 + (7 + 4) * 10);
        }

        @Test
        @DisplayName("a streamed call settles to the usage of the stream's last chunk")
        void streamedCallSettlesToUsage() throws Exception {
            gemini.answerByDefault(FakeModel.DEFAULT_REPLY.usage(
                    FakeModel.DEFAULT_USAGE.withCachedInput(5).withThoughts(4)));
            CompletableFuture<ChatResponse> done = new CompletableFuture<>();

            metered().wrapStreaming(geminiStreamingModel()).chat("hi", handler(done));

            assertThat(done.get(30, TimeUnit.SECONDS).aiMessage().text()).isEqualTo(FakeModel.DEFAULT_TEXT);
            assertCharged(1, 11 + 7 + 4, 6 * 3 + 5 + (7 + 4) * 10);
        }

        @Test
        @DisplayName("a 400 from Gemini gives the request, its tokens and its money back, plain and streamed")
        void modelErrorCancels() {
            gemini.answerByDefault(Failure.status(400));

            assertThatThrownBy(() -> metered().wrap(geminiModel()).chat("hi")).isInstanceOf(RuntimeException.class);
            CompletableFuture<ChatResponse> done = new CompletableFuture<>();
            metered().wrapStreaming(geminiStreamingModel()).chat("hi", handler(done));
            assertThatThrownBy(() -> done.get(30, TimeUnit.SECONDS)).isInstanceOf(Exception.class);

            assertThat(gemini.calls().size()).isEqualTo(2);
            assertCharged(0, 0, 0);
        }

        @Test
        @DisplayName("a call larger than the token window is refused as too large and never reaches Gemini")
        void tooLargeIsRefusedWithoutCallingTheModel() {
            assertThatThrownBy(() -> tight().wrap(geminiModel()).chat("hi"))
                    .isInstanceOfSatisfying(
                            RateLimitExceededException.class,
                            e -> assertThat(e.decision().tooLarge()).isTrue());
            assertThatThrownBy(() -> tight().wrapStreaming(geminiStreamingModel())
                            .chat("hi", handler(new CompletableFuture<>())))
                    .isInstanceOf(RateLimitExceededException.class);
            assertThat(gemini.calls().size()).isZero();
        }
    }
}
