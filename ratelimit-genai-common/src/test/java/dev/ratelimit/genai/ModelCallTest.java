package dev.ratelimit.genai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

class ModelCallTest {

    private static final Window REQUESTS = Window.of(2, Duration.ofMinutes(1));
    private static final Window TOKENS = Window.tokens(1_000, Duration.ofMinutes(1));
    private static final Tier TIER = Tier.of("t", REQUESTS, TOKENS);
    private static final SharedBudget CAP = SharedBudget.of("cap", Window.tokens("tpm", 10_000, Duration.ofMinutes(1)));

    private final RateLimiter limiter =
            SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();

    private long used(Window window) {
        return limiter.usage("u", TIER).stream()
                .filter(usage -> usage.window().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    private ModelCall admit() {
        return ModelCall.admit(limiter, "u", TIER, request("gpt-4o", CAP, null, 10, 100));
    }

    @Test
    void reservesThePromptAndMaximumThenSettlesOnceToTheReportedTotal() {
        ModelCall call = admit();
        assertThat(used(TOKENS)).isEqualTo(110);
        assertThat(limiter.usage(CAP).get(0).used()).isEqualTo(110);

        call.complete(42L, 30L, 12L, 5).toCompletableFuture().join();
        call.cancel().toCompletableFuture().join(); // a second settlement does nothing

        assertThat(used(TOKENS)).isEqualTo(42);
        assertThat(used(REQUESTS)).isEqualTo(1);
        assertThat(limiter.usage(CAP).get(0).used()).isEqualTo(42);
    }

    @Test
    void withoutATotalSettlesToTheReportedPartsOrTheCountedOnes() {
        admit().complete(null, null, 7L, 5).toCompletableFuture().join();
        assertThat(used(TOKENS)).isEqualTo(10 + 7);
        admit().produced(3).toCompletableFuture().join();
        assertThat(used(TOKENS)).isEqualTo(10 + 7 + 10 + 3);
    }

    @Test
    void cancelGivesEverythingBackAndARefusalThrowsWithTheDecision() throws Exception {
        admit().cancel().toCompletableFuture().join();
        assertThat(used(REQUESTS)).isZero();
        admit();
        ModelCall.admitAsync(limiter, "u", TIER, request("model", null, null, 1, 1))
                .toCompletableFuture()
                .get();

        assertThatThrownBy(this::admit).isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
            assertThat(e.userId()).isEqualTo("u");
            assertThat(e.decision().window()).isEqualTo(REQUESTS);
        });
        assertThat(TokenCounts.forModel("openai/gpt-4o").count("hello world")).isEqualTo(2);
    }

    private static final Window SPEND = Window.of("spend-day", 20_000, Duration.ofDays(1), Window.Unit.USD_MICROS);
    private static final Window METERED_TOKENS = Window.tokens(100_000, Duration.ofMinutes(1));
    private static final Tier METERED = Tier.of("m", Window.of(100, Duration.ofMinutes(1)), METERED_TOKENS, SPEND);
    private static final ModelPrice PRICE = ModelPrice.perMillion("3", "1", "10");

    private long spent() {
        return limiter.usage("u", METERED).stream()
                .filter(usage -> usage.window().equals(SPEND))
                .findFirst()
                .orElseThrow()
                .used();
    }

    private long meteredTokens() {
        return limiter.usage("u", METERED).stream()
                .filter(usage -> usage.window().equals(METERED_TOKENS))
                .findFirst()
                .orElseThrow()
                .used();
    }

    private ModelCall admitPriced(long maxOutputTokens) {
        return ModelCall.admit(limiter, "u", METERED, request("m1", null, PRICE, 10, maxOutputTokens));
    }

    @Test
    void aPricedCallReservesItsWorstCaseAndSettlesToTheCostOfItsUsage() {
        ModelCall call = admitPriced(100);
        assertThat(spent()).isEqualTo(10 * 3 + 100 * 10);

        call.complete(TokenUsage.openAi(10, 4, 20)).toCompletableFuture().join();

        assertThat(spent()).isEqualTo(6 * 3 + 4 + 20 * 10);
        assertThat(meteredTokens()).isEqualTo(30);
    }

    @Test
    void theOtherEndingsChargeTheCountOrNothing() {
        admitPriced(100).produced(5).toCompletableFuture().join();
        assertThat(spent()).isEqualTo(10 * 3 + 5 * 10);
        admitPriced(100).complete(null, null, null, 2).toCompletableFuture().join();
        assertThat(spent()).isEqualTo(80 + 10 * 3 + 2 * 10);
        admitPriced(100).cancel().toCompletableFuture().join();
        assertThat(spent()).isEqualTo(130);
    }

    @Test
    void aWorstCaseAboveWhatIsLeftIsRefusedWithTheSpendWindow() {
        admitPriced(1_000).complete(TokenUsage.of(10, 10)).toCompletableFuture().join(); // reserved 10,030

        assertThatThrownBy(() -> admitPriced(1_990))
                .isInstanceOfSatisfying(
                        RateLimitExceededException.class,
                        e -> assertThat(e.decision().window()).isEqualTo(SPEND));
        assertThat(spent()).isEqualTo(130);
    }

    @Test
    void anUnpricedModelUnderASpendWindowIsRefusedBeforeAnythingIsReserved() {
        assertThatThrownBy(() -> ModelCall.admit(limiter, "u", METERED, request("mystery", null, null, 10, 10)))
                .isInstanceOfSatisfying(
                        UnpricedModelException.class, e -> assertThat(e.model()).isEqualTo("mystery"))
                .hasMessageContaining("spend-day");
        SharedBudget spendCap =
                SharedBudget.of("cap-spend", Window.of("spend", 1_000, Duration.ofDays(1), Window.Unit.USD_MICROS));
        assertThatThrownBy(() -> ModelCall.admitAsync(limiter, "u", TIER, request("mystery", spendCap, null, 10, 10)))
                .as("a spend window of the model's budget")
                .isInstanceOf(UnpricedModelException.class);
        assertThat(limiter.usage("u", METERED)).allMatch(usage -> usage.used() == 0);

        // without a spend window an unpriced model is charged in tokens only
        ModelCall.admit(limiter, "u", TIER, request("mystery", null, null, 10, 10))
                .complete(TokenUsage.of(3, 4))
                .toCompletableFuture()
                .join();
        assertThat(used(TOKENS)).isEqualTo(7);
        assertThat(spent()).isZero();
    }

    private static ModelCall.Request request(
            String model, @Nullable SharedBudget budget, @Nullable ModelPrice price, long prompt, long maxOutput) {
        return new ModelCall.Request(model, budget, price, TokenCounts.forModel("gpt-4o"), prompt, maxOutput);
    }
}
