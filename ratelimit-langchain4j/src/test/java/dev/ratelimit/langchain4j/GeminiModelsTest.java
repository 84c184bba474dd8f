package dev.ratelimit.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.googleai.GoogleAiGeminiChatModel;
import dev.langchain4j.model.googleai.GoogleAiGeminiStreamingChatModel;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.testsupport.gemini.GeminiStub;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's own Gemini models ({@link GoogleAiGeminiChatModel}, {@link
 * GoogleAiGeminiStreamingChatModel}), wrapped, against {@link GeminiStub}: each call is charged, then
 * settled to the usage Gemini reports, cached prompt tokens at the cached price and thinking tokens at
 * the output price.
 */
class GeminiModelsTest {

    private static final String MODEL = "gemini-2.5-flash";
    private static final Window REQUESTS = Window.of(10, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(1_000_000, Duration.ofHours(1));
    /** A day's spend of one dollar, in micro-dollars. */
    private static final Window SPEND = Window.of("spend-day", 1_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS);

    private static final Tier METERED = Tier.of("metered", REQUESTS, TOKENS, SPEND);
    /** $3 per million fresh input tokens, $1 cached, $10 output: micro-dollars per token. */
    private static final PriceTable PRICES = PriceTable.of(Map.of(MODEL, ModelPrice.perMillion("3", "1", "10")));

    private GeminiStub stub;
    private RateLimiter limiter;
    private String user;
    private SharedBudget modelCap;
    private LangChain4jRateLimiter rateLimit;

    @BeforeEach
    void start() throws Exception {
        stub = new GeminiStub();
        limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
        user = "user-" + UUID.randomUUID();
        modelCap = SharedBudget.of("gemini/" + MODEL, Window.tokens("tpm", 5_000_000, Duration.ofMinutes(1)));
        rateLimit = LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> METERED)
                .modelBudgets(Map.of(MODEL, modelCap))
                .priceTable(PRICES)
                .build();
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private ChatModel chatModel() {
        return GoogleAiGeminiChatModel.builder()
                .baseUrl(stub.baseUrl())
                .apiKey("test")
                .modelName(MODEL)
                .maxRetries(0)
                .build();
    }

    private StreamingChatModel streamingModel() {
        return GoogleAiGeminiStreamingChatModel.builder()
                .baseUrl(stub.baseUrl())
                .apiKey("test")
                .modelName(MODEL)
                .build();
    }

    private long used(Window window) {
        return limiter.usage(user, METERED).stream()
                .filter(usage -> usage.window().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    @Test
    @DisplayName("a plain call settles tokens, the model's cap and the spend to Gemini's usage")
    void plainCallSettlesToUsage() {
        String answer = rateLimit.wrap(chatModel()).chat("hi");

        assertThat(answer).isEqualTo(GeminiStub.REPLY);
        assertThat(stub.calls()).isEqualTo(1);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(18);
        assertThat(limiter.usage(modelCap).get(0).used()).isEqualTo(18);
        assertThat(used(SPEND)).isEqualTo(11 * 3 + 7 * 10);
    }

    @Test
    @DisplayName("cached prompt tokens are charged at the cached price, thinking tokens at the output price")
    void cachedAndThinkingTokensArePricedByKind() {
        stub.reportCachedTokens(5);
        stub.reportThoughtsTokens(4);

        rateLimit.wrap(chatModel()).chat("hi");

        assertThat(used(TOKENS)).isEqualTo(22); // 11 prompt, 7 candidates, 4 thoughts
        assertThat(used(SPEND)).isEqualTo(6 * 3 + 5 + (7 + 4) * 10);
    }

    @Test
    @DisplayName("a streamed call settles to the usage of the stream's last chunk")
    void streamedCallSettlesToUsage() throws Exception {
        stub.reportCachedTokens(5);
        stub.reportThoughtsTokens(4);
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();

        rateLimit.wrapStreaming(streamingModel()).chat("hi", handler(done));

        ChatResponse response = done.get(30, TimeUnit.SECONDS);
        assertThat(response.aiMessage().text()).isEqualTo(GeminiStub.REPLY);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(22);
        assertThat(limiter.usage(modelCap).get(0).used()).isEqualTo(22);
        assertThat(used(SPEND)).isEqualTo(6 * 3 + 5 + (7 + 4) * 10);
    }

    @Test
    @DisplayName("a model error gives the reservation back, plain and streamed")
    void modelErrorCancels() throws Exception {
        stub.failWith(400);

        assertThatThrownBy(() -> rateLimit.wrap(chatModel()).chat("hi")).isInstanceOf(RuntimeException.class);
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        rateLimit.wrapStreaming(streamingModel()).chat("hi", handler(done));
        assertThatThrownBy(() -> done.get(30, TimeUnit.SECONDS)).isInstanceOf(Exception.class);

        assertThat(stub.calls()).isEqualTo(2);
        assertThat(used(REQUESTS)).isZero();
        assertThat(used(TOKENS)).isZero();
        assertThat(used(SPEND)).isZero();
    }

    @Test
    @DisplayName("a call too large for the user's window is refused without calling Gemini")
    void tooLargeIsRefusedWithoutCallingTheModel() {
        Tier small = Tier.of("small", REQUESTS, Window.tokens(500, Duration.ofMinutes(1)));
        LangChain4jRateLimiter tight = LangChain4jRateLimiter.builder(limiter)
                .user(() -> user)
                .tier(id -> small)
                .defaultMaxOutputTokens(1_000)
                .build();

        assertThatThrownBy(() -> tight.wrap(chatModel()).chat("hi"))
                .isInstanceOfSatisfying(
                        RateLimitExceededException.class,
                        e -> assertThat(e.decision().tooLarge()).isTrue());
        assertThat(stub.calls()).isZero();
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
}
