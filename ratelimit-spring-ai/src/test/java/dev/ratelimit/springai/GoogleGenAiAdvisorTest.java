package dev.ratelimit.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.genai.Client;
import com.google.genai.types.HttpOptions;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.google.genai.GoogleGenAiChatModel;
import org.springframework.ai.google.genai.GoogleGenAiChatOptions;

/**
 * Spring AI's own {@link GoogleGenAiChatModel} (Google's Gen AI SDK underneath) behind a {@link
 * ChatClient} with the advisor, against {@link GeminiStub}: each call is charged, then settled to the
 * usage Gemini reports, cached prompt tokens at the cached price and thinking tokens at the output price.
 */
class GoogleGenAiAdvisorTest {

    private static final String MODEL = "gemini-2.5-flash";
    private static final Window REQUESTS = Window.of(10, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(1_000_000, Duration.ofHours(1));
    /** A day's spend of one dollar, in micro-dollars. */
    private static final Window SPEND = Window.of("spend-day", 1_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS);

    private static final Tier METERED = Tier.of("metered", REQUESTS, TOKENS, SPEND);
    private static final TierPolicy TIERS =
            TierPolicy.builder().tier(METERED).defaultTier("metered").build();
    /** $3 per million fresh input tokens, $1 cached, $10 output: micro-dollars per token. */
    private static final PriceTable PRICES = PriceTable.of(Map.of(MODEL, ModelPrice.perMillion("3", "1", "10")));

    private GeminiStub stub;
    private RateLimiter limiter;
    private String user;
    private SharedBudget modelCap;

    @BeforeEach
    void start() throws Exception {
        stub = new GeminiStub();
        limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
        user = "user-" + UUID.randomUUID();
        modelCap = SharedBudget.of("gemini/" + MODEL, Window.tokens("tpm", 5_000_000, Duration.ofMinutes(1)));
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    private ChatClient chatClient(RateLimitAdvisor advisor) {
        Client genAi = Client.builder()
                .apiKey("test")
                .httpOptions(HttpOptions.builder().baseUrl(stub.rootUrl()).build())
                .build();
        GoogleGenAiChatModel model = GoogleGenAiChatModel.builder()
                .genAiClient(genAi)
                .options(GoogleGenAiChatOptions.builder().model(MODEL).build())
                .build();
        return ChatClient.builder(model).defaultAdvisors(advisor).build();
    }

    private ChatClient chatClient() {
        return chatClient(RateLimitAdvisor.builder(limiter, TIERS)
                .endUserResolver(request -> new EndUser(user, null))
                .modelBudgets(Map.of(MODEL, modelCap))
                .priceTable(PRICES)
                .build());
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
        String answer = chatClient().prompt("hi").call().content();

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

        chatClient().prompt("hi").call().content();

        assertThat(used(TOKENS)).isEqualTo(22); // 11 prompt, 7 candidates, 4 thoughts
        assertThat(used(SPEND)).isEqualTo(6 * 3 + 5 + (7 + 4) * 10);
    }

    @Test
    @DisplayName("a streamed call settles to the usage of the stream's last chunk")
    void streamedCallSettlesToUsage() {
        stub.reportCachedTokens(5);
        stub.reportThoughtsTokens(4);

        String answer = String.join(
                "", chatClient().prompt("hi").stream().content().collectList().block(Duration.ofSeconds(30)));

        assertThat(answer).isEqualTo(GeminiStub.REPLY);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(used(TOKENS)).isEqualTo(22);
        assertThat(limiter.usage(modelCap).get(0).used()).isEqualTo(22);
        assertThat(used(SPEND)).isEqualTo(6 * 3 + 5 + (7 + 4) * 10);
    }

    @Test
    @DisplayName("a model error gives the reservation back")
    void modelErrorCancels() {
        stub.failWith(400);

        assertThatThrownBy(() -> chatClient().prompt("hi").call().content()).isInstanceOf(RuntimeException.class);

        assertThat(stub.calls()).isEqualTo(1);
        assertThat(used(TOKENS)).isZero();
        assertThat(used(SPEND)).isZero();
    }

    @Test
    @DisplayName("a call too large for the user's window is refused without calling Gemini")
    void tooLargeIsRefusedWithoutCallingTheModel() {
        Tier small = Tier.of("metered", REQUESTS, Window.tokens(500, Duration.ofMinutes(1)));
        RateLimitAdvisor tight = RateLimitAdvisor.builder(
                        limiter,
                        TierPolicy.builder().tier(small).defaultTier("metered").build())
                .endUserResolver(request -> new EndUser(user, null))
                .defaultMaxTokens(1_000)
                .build();

        assertThatThrownBy(() -> chatClient(tight).prompt("hi").call().content())
                .isInstanceOfSatisfying(
                        RateLimitExceededException.class,
                        e -> assertThat(e.decision().tooLarge()).isTrue());
        assertThatThrownBy(
                        () -> chatClient(tight).prompt("hi").stream().content().blockLast(Duration.ofSeconds(30)))
                .isInstanceOf(RateLimitExceededException.class);
        assertThat(stub.calls()).isZero();
    }
}
