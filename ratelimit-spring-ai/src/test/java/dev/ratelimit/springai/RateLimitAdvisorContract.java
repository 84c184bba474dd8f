package dev.ratelimit.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.genai.Client;
import com.google.genai.types.HttpOptions;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.fakemodel.Failure;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.fakemodel.Reply;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.TokenUsage;
import dev.ratelimit.genai.UnpricedModelException;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.google.genai.GoogleGenAiChatModel;
import org.springframework.ai.google.genai.GoogleGenAiChatOptions;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.annotation.Tool;
import reactor.core.Disposable;

/**
 * Spring AI's own {@link OpenAiChatModel} behind a {@link ChatClient} with the advisor, against the
 * {@link FakeModel}: what reaches the model and what each ending leaves in the user's windows and the model's
 * shared budget. Subclasses supply the store.
 */
abstract class RateLimitAdvisorContract {

    private static final String MODEL = "gpt-4o-mini";
    private static final String GEMINI = "gemini-2.5-flash";
    private static final Window REQUESTS = Window.of(10, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(1_000_000, Duration.ofHours(1));
    private static final Tier TIER = Tier.of("free", REQUESTS, TOKENS);
    /** A day's spend of one dollar, in micro-dollars. */
    private static final Window SPEND = Window.of("spend-day", 1_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS);

    private static final Tier METERED = Tier.of("metered", REQUESTS, TOKENS, SPEND);
    private static final TierPolicy TIERS =
            TierPolicy.builder().tier(TIER).tier(METERED).defaultTier("free").build();
    /**
     * $3 per million fresh input tokens, $1 cached, $10 output: micro-dollars per token, so the
     * stub's 11 prompt and 7 completion tokens cost 11 * 3 + 7 * 10 = 103 micro-dollars.
     */
    private static final ModelPrice PRICE = ModelPrice.perMillion("3", "1", "10");

    private static final PriceTable PRICES = PriceTable.of(Map.of(MODEL, PRICE, GEMINI, PRICE));

    /** The first part of the fake's streamed reply. */
    private static final String FIRST_PART = "Hello";

    private FakeModel stub;
    private RateLimiter limiter;
    private String user;
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
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private RateLimitAdvisor.Builder advisor() {
        return RateLimitAdvisor.builder(limiter, TIERS)
                .endUserResolver(request -> new EndUser(user, null))
                .modelBudgets(Map.of(MODEL, modelCap, GEMINI, modelCap));
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
        return TokenCounts.forModel(MODEL).count(text);
    }

    /** Waits for a settlement that nobody waits for (a cancelled stream's), up to 30 seconds. */
    private static void eventually(LongSupplier actual, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (actual.getAsLong() != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(actual.getAsLong()).isEqualTo(expected);
    }

    /** An advisor whose user is on the metered tier (a spend window), with {@link #PRICES}. */
    private RateLimitAdvisor.Builder metered() {
        return advisor()
                .endUserResolver(request -> new EndUser(user, "metered"))
                .priceTable(PRICES);
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

    /** The worst case reserved for a call of {@code text} with the default 1,024 completion tokens. */
    private static long worstCase(String text) {
        return PRICE.worstCaseMicros(prompt(text), RateLimitAdvisor.DEFAULT_MAX_TOKENS);
    }

    @Test
    @DisplayName("a plain call settles the user's tokens and the model's cap to the stub's usage")
    void plainCallSettlesToUsage() {
        String answer = chatClient().prompt("hi").call().content();

        assertThat(answer).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(stub.calls().size()).isEqualTo(1);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
        assertThat(modelCapUsed()).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName(
            "given a MeterRegistry, plain and streamed calls record OpenTelemetry's GenAI token usage and duration")
    void genAiMetrics() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimitAdvisor advisor = advisor().meterRegistry(registry).build();
        chatClient(advisor, true).prompt("hi").call().content();
        chatClient(advisor, true).prompt("hi").stream().content().collectList().block(Duration.ofSeconds(30));

        for (String type : List.of("input", "output")) {
            DistributionSummary tokens = registry.get("gen_ai.client.token.usage")
                    .tags("gen_ai.token.type", type, "gen_ai.request.model", MODEL, "gen_ai.provider.name", "openai")
                    .tag("gen_ai.operation.name", "chat")
                    .summary();
            assertThat(tokens.count()).isEqualTo(2);
            assertThat(tokens.totalAmount())
                    .isEqualTo(2.0
                            * (type.equals("input")
                                    ? FakeModel.DEFAULT_USAGE.input()
                                    : FakeModel.DEFAULT_USAGE.output()));
        }
        Timer duration = registry.get("gen_ai.client.operation.duration").timer();
        assertThat(duration.count()).isEqualTo(2);
        assertThat(duration.getId().getTag("error.type")).isNull();
    }

    @Test
    @DisplayName("without reported usage a plain call settles to the counted prompt and output")
    void plainCallWithoutUsageSettlesToCounted() {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.noUsage());

        chatClient().prompt("hi").call().content();

        assertThat(used(TOKENS)).isEqualTo(prompt("hi") + count(FakeModel.DEFAULT_TEXT));
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

        assertThat(String.join("", parts)).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
        assertThat(modelCapUsed()).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("a stream without usage (streamUsage(false)) settles to the counted prompt and output")
    void streamWithoutUsageSettlesToCounted() {
        chatClient(advisor().build(), false).prompt("hi").stream().content().blockLast(Duration.ofSeconds(30));

        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(prompt("hi") + count(FakeModel.DEFAULT_TEXT));
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
                    assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(FakeModel.DEFAULT_TEXT);
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
            assertThat(stub.calls().size()).isEqualTo(10);
            assertThat(used(TOKENS)).isEqualTo(10L * FakeModel.DEFAULT_USAGE.total());
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

        assertThat(answer).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(used(REQUESTS)).isEqualTo(2);
        assertThat(used(TOKENS)).isEqualTo(2L * FakeModel.DEFAULT_USAGE.total());
        assertThat(modelCapUsed()).isEqualTo(2L * FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("a streamed tool-calling loop calls the model twice and is charged twice")
    void streamedToolLoopIsChargedPerModelCall() {
        List<String> parts = chatClient().prompt("what time is it?").tools(new Clock()).stream()
                .content()
                .collectList()
                .block(Duration.ofSeconds(30));

        assertThat(String.join("", parts)).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(used(REQUESTS)).isEqualTo(2);
        assertThat(used(TOKENS)).isEqualTo(2L * FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("a 500 from the model cancels the reservation: the request and tokens come back")
    void modelErrorCancels() {
        stub.answerByDefault(Failure.status(500));

        assertThatThrownBy(() -> chatClient().prompt("hi").call().content())
                .isNotInstanceOf(RateLimitExceededException.class);

        assertThat(stub.calls().size()).isEqualTo(1);
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
        assertThat(modelCapUsed()).isZero();
    }

    @Test
    @DisplayName("a stream that fails with a 500 before any output cancels the reservation")
    void streamErrorCancels() {
        stub.answerByDefault(Failure.status(500));

        assertThatThrownBy(() -> chatClient().prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isNotInstanceOf(RateLimitExceededException.class);

        assertThat(stub.calls().size()).isEqualTo(1);
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
        assertThat(modelCapUsed()).isZero();
    }

    @Test
    @DisplayName("a stream the caller cancels commits the counted prompt and the output produced")
    void cancelledStreamCommitsWhatWasProduced() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.at(1, held, Reply.Then.CONTINUE));
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

            assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(FIRST_PART);
            // the caller goes away; on another thread, as the OpenAI client's close() waits for the
            // (held) stream to end, after the cancellation has passed the advisor
            CompletableFuture.runAsync(subscription::dispose);
            eventually(() -> used(TOKENS), prompt("hi") + count(FIRST_PART));
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
        RateLimitAdvisor tight = tight();

        assertThatThrownBy(() -> chatClient(tight, true).prompt("hi").call().content())
                .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                    assertThat(e.decision().tooLarge()).isTrue();
                    assertThat(e.userId()).isEqualTo(user);
                });
        assertThatThrownBy(() ->
                        chatClient(tight, true).prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(stub.calls().size()).isZero();
    }

    @Test
    @DisplayName("the call's maxTokens option is what is reserved beyond the prompt")
    void maxTokensOptionIsReserved() {
        RateLimitAdvisor tight = tight();

        String answer = chatClient(tight, true)
                .prompt("hi")
                .options(OpenAiChatOptions.builder().maxTokens(100))
                .call()
                .content();

        assertThat(answer).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(stub.calls().size()).isEqualTo(1);
    }

    /** A user whose token window (500) is smaller than a call's default reservation (1,000 output tokens). */
    private RateLimitAdvisor tight() {
        Tier small = Tier.of("free", REQUESTS, Window.tokens(500, Duration.ofMinutes(1)));
        return RateLimitAdvisor.builder(
                        limiter,
                        TierPolicy.builder().tier(small).defaultTier("free").build())
                .endUserResolver(request -> new EndUser(user, null))
                .defaultMaxTokens(1_000)
                .build();
    }

    @Test
    @DisplayName("a call with no end user fails before the model is called")
    void missingUserFails() {
        RateLimitAdvisor anonymous = RateLimitAdvisor.builder(limiter, TIERS).build();

        assertThatThrownBy(() -> chatClient(anonymous, true).prompt("hi").call().content())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RateLimitAdvisor.USER);
        assertThat(stub.calls().size()).isZero();
    }

    @Test
    @DisplayName("money: a priced call is charged the cost of the stub's usage in the spend window")
    void spendIsChargedTheCostOfTheUsage() {
        ChatClient chat = chatClient(metered().build(), true);

        chat.prompt("hi").call().content();

        assertThat(spent()).isEqualTo(103); // 11 * $3 + 7 * $10 per million tokens
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("money: cached prompt tokens OpenAI reports are charged at the cached price")
    void cachedTokensAreChargedAtTheCachedPrice() {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.usage(FakeModel.DEFAULT_USAGE.withCachedInput(5)));

        chatClient(metered().build(), true).prompt("hi").call().content();

        assertThat(spent()).isEqualTo(6 * 3 + 5 + 7 * 10); // 6 fresh, 5 cached, 7 output
        assertThat(used(TOKENS)).isEqualTo(FakeModel.DEFAULT_USAGE.total());
    }

    @Test
    @DisplayName("money: a streamed call is charged the cost of the stream's reported usage")
    void streamedSpendIsChargedTheCostOfTheUsage() {
        chatClient(metered().build(), true).prompt("hi").stream().content().blockLast(Duration.ofSeconds(30));

        assertThat(spent()).isEqualTo(103);
    }

    @Test
    @DisplayName("money: without reported usage the counted prompt and output are charged at their prices")
    void spendWithoutUsageIsTheCostOfTheCount() {
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.noUsage());

        chatClient(metered().build(), true).prompt("hi").call().content();

        assertThat(spent()).isEqualTo(PRICE.costMicros(TokenUsage.of(prompt("hi"), count(FakeModel.DEFAULT_TEXT))));
    }

    @Test
    @DisplayName(
            "money: the worst case is reserved first: a call whose worst case exceeds what is left is refused before the model, though its cost would fit")
    void worstCaseIsReservedFirst() {
        Window tight = Window.of("spend-day", worstCase("hi") + 50, Duration.ofDays(1), Window.Unit.USD_MICROS);
        Tier tightTier = Tier.of("metered", REQUESTS, TOKENS, tight);
        ChatClient chat = chatClient(
                RateLimitAdvisor.builder(
                                limiter,
                                TierPolicy.builder()
                                        .tier(tightTier)
                                        .defaultTier("metered")
                                        .build())
                        .endUserResolver(request -> new EndUser(user, null))
                        .priceTable(PRICES)
                        .build(),
                true);
        chat.prompt("hi").call().content(); // admitted at its worst case, settled to 103

        assertThatThrownBy(() -> chat.prompt("hi").call().content())
                .isInstanceOfSatisfying(
                        RateLimitExceededException.class,
                        e -> assertThat(e.decision().window()).isEqualTo(tight));
        assertThatThrownBy(() -> chat.prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(stub.calls().size()).isEqualTo(1);
        // the same call with a smaller maximum fits: its worst case is what decides
        chat.prompt("hi")
                .options(OpenAiChatOptions.builder().maxTokens(100))
                .call()
                .content();
        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(spent(tightTier, tight)).isEqualTo(2 * 103);
    }

    @Test
    @DisplayName(
            "money: a held stream holds its worst case; cancelled, it keeps the cost of what was produced and gives the rest back")
    void cancelledStreamGivesTheRestOfTheWorstCaseBack() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        stub.answerByDefault(FakeModel.DEFAULT_REPLY.at(1, held, Reply.Then.CONTINUE));
        CompletableFuture<String> first = new CompletableFuture<>();
        try {
            Disposable subscription = chatClient(metered().build(), true).prompt("hi").stream()
                    .chatClientResponse()
                    .subscribe(
                            response -> {
                                String text = text(response.chatResponse());
                                if (text != null) {
                                    first.complete(text);
                                }
                            },
                            first::completeExceptionally);
            first.get(30, TimeUnit.SECONDS);
            assertThat(spent()).isEqualTo(worstCase("hi"));

            CompletableFuture.runAsync(subscription::dispose);

            eventually(this::spent, PRICE.costMicros(TokenUsage.of(prompt("hi"), count(FIRST_PART))));
        } finally {
            held.countDown();
        }
    }

    @Test
    @DisplayName("money: a 500 from the model gives the whole worst case back, plain and streamed")
    void modelErrorGivesTheMoneyBack() {
        stub.answerByDefault(Failure.status(500));
        ChatClient chat = chatClient(metered().build(), true);

        assertThatThrownBy(() -> chat.prompt("hi").call().content()).isNotInstanceOf(RateLimitExceededException.class);
        assertThatThrownBy(() -> chat.prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isNotInstanceOf(RateLimitExceededException.class);

        assertThat(stub.calls().size()).isEqualTo(2);
        assertThat(spent()).isZero();
        assertThat(used(REQUESTS)).isZero();
    }

    @Test
    @DisplayName("money: a tool-calling loop of two model calls is charged twice, plain and streamed")
    void toolLoopIsChargedTwice() {
        ChatClient chat = chatClient(metered().build(), true);

        chat.prompt("what time is it?").tools(new Clock()).call().content();
        assertThat(spent()).isEqualTo(2 * 103);
        chat.prompt("what time is it?").tools(new Clock()).stream().content().blockLast(Duration.ofSeconds(30));

        assertThat(stub.calls().size()).isEqualTo(4);
        assertThat(spent()).isEqualTo(4 * 103);
    }

    @Test
    @DisplayName(
            "money: a model without a price under a spend window throws UnpricedModelException, plain and streamed; the model is not called")
    void unpricedModelUnderASpendWindowIsNotCalled() {
        ChatClient chat = chatClient(
                metered().priceTable(PriceTable.of(Map.of("gpt-4o", PRICE))).build(), true);

        assertThatThrownBy(() -> chat.prompt("hi").call().content())
                .isInstanceOfSatisfying(
                        UnpricedModelException.class, e -> assertThat(e.model()).isEqualTo(MODEL));
        assertThatThrownBy(() -> chat.prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isInstanceOf(UnpricedModelException.class);
        assertThatThrownBy(() -> chatClient(
                                advisor()
                                        .endUserResolver(request -> new EndUser(user, "metered"))
                                        .build(),
                                true)
                        .prompt("hi")
                        .call()
                        .content())
                .as("no price table at all")
                .isInstanceOf(UnpricedModelException.class);

        assertThat(stub.calls().size()).isZero();
        assertThat(used(REQUESTS)).isZero();
        assertThat(spent()).isZero();
        // without a spend window, the unpriced model is called as before
        chatClient(advisor().priceTable(PriceTable.of(Map.of("gpt-4o", PRICE))).build(), true)
                .prompt("hi")
                .call()
                .content();
        assertThat(stub.calls().size()).isEqualTo(1);
    }

    /**
     * Spring AI's own {@link GoogleGenAiChatModel}, its Google Gen AI {@link Client} pointed at the fake model, on a metered tier: charged, then settled to the usage Gemini reports, cached content
     * at the cached price and thinking tokens at the output price.
     */
    @Nested
    @DisplayName("Gemini")
    class Gemini {

        final FakeModel gemini = FakeModel.start();

        @AfterEach
        void stopGemini() {
            gemini.close();
        }

        private ChatClient geminiClient(RateLimitAdvisor advisor) {
            Client genAi = Client.builder()
                    .apiKey("test")
                    .httpOptions(HttpOptions.builder().baseUrl(gemini.rootUrl()).build())
                    .build();
            GoogleGenAiChatModel model = GoogleGenAiChatModel.builder()
                    .genAiClient(genAi)
                    .options(GoogleGenAiChatOptions.builder().model(GEMINI).build())
                    .build();
            return ChatClient.builder(model).defaultAdvisors(advisor).build();
        }

        private ChatClient geminiClient() {
            return geminiClient(metered().build());
        }

        @Test
        @DisplayName("a plain call settles tokens, the model's cap and the spend to Gemini's usage")
        void plainCallSettlesToUsage() {
            String answer = geminiClient().prompt("hi").call().content();

            assertThat(answer).isEqualTo(FakeModel.DEFAULT_TEXT);
            assertThat(gemini.calls().size()).isEqualTo(1);
            assertCharged(1, 11 + 7, 11 * 3 + 7 * 10); // 11 prompt, 7 candidates
        }

        @Test
        @DisplayName("cached content is charged at the cached price, thinking tokens at the output price")
        void cachedAndThinkingTokensArePricedByKind() {
            gemini.answerByDefault(FakeModel.DEFAULT_REPLY.usage(
                    FakeModel.DEFAULT_USAGE.withCachedInput(5).withThoughts(4)));

            geminiClient().prompt("hi").call().content();

            // 11 prompt (5 of them cached), 7 candidates, 4 thoughts
            assertCharged(1, 11 + 7 + 4, 6 * 3 + 5 + (7 + 4) * 10);
        }

        @Test
        @DisplayName("a streamed call settles to the usage of the stream's last chunk")
        void streamedCallSettlesToUsage() {
            gemini.answerByDefault(FakeModel.DEFAULT_REPLY.usage(
                    FakeModel.DEFAULT_USAGE.withCachedInput(5).withThoughts(4)));

            List<String> parts =
                    geminiClient().prompt("hi").stream().content().collectList().block(Duration.ofSeconds(30));

            assertThat(String.join("", parts)).isEqualTo(FakeModel.DEFAULT_TEXT);
            assertCharged(1, 11 + 7 + 4, 6 * 3 + 5 + (7 + 4) * 10);
        }

        @Test
        @DisplayName("a 400 from Gemini gives the request, its tokens and its money back, plain and streamed")
        void modelErrorCancels() {
            gemini.answerByDefault(Failure.status(400));

            assertThatThrownBy(() -> geminiClient().prompt("hi").call().content())
                    .isInstanceOf(RuntimeException.class);
            assertThatThrownBy(
                            () -> geminiClient().prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                    .isInstanceOf(RuntimeException.class);

            assertThat(gemini.calls().size()).isEqualTo(2);
            assertCharged(0, 0, 0);
        }

        @Test
        @DisplayName("a call larger than the token window is refused as too large and never reaches Gemini")
        void tooLargeIsRefusedWithoutCallingTheModel() {
            assertThatThrownBy(() -> geminiClient(tight()).prompt("hi").call().content())
                    .isInstanceOfSatisfying(
                            RateLimitExceededException.class,
                            e -> assertThat(e.decision().tooLarge()).isTrue());
            assertThatThrownBy(() -> geminiClient(tight()).prompt("hi").stream()
                            .content()
                            .blockLast(Duration.ofSeconds(30)))
                    .isInstanceOf(RateLimitExceededException.class);
            assertThat(gemini.calls().size()).isZero();
        }
    }
}
