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
        return ModelCall.admit(limiter, "u", TIER, CAP, TokenCounts.encodingFor("gpt-4o"), 10, 100);
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
        ModelCall.admitAsync(limiter, "u", TIER, null, TokenCounts.encodingFor(null), 1, 1)
                .toCompletableFuture()
                .get();

        assertThatThrownBy(this::admit).isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
            assertThat(e.userId()).isEqualTo("u");
            assertThat(e.decision().window()).isEqualTo(REQUESTS);
        });
        assertThat(TokenCounts.text(TokenCounts.encodingFor("openai/gpt-4o"), "hello world"))
                .isEqualTo(2);
    }
}
