package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section U: looking at windows without charging them ({@code WindowStore.peek}). */
interface UsageRules extends ConformanceSection {

    @Test
    @DisplayName("U1 peeking reports every window's use and reset, a user's and a shared budget's, and charges nothing")
    default void peekChargesNothing() {
        Window requests = Window.of(3, MINUTE);
        Window tokens = Window.tokens(1_000, MINUTE);
        Tier tier = Tier.of("u1", requests, tokens);
        SharedBudget upstream = SharedBudget.of(user("u1-upstream"), Window.tokens(5_000, MINUTE));
        String user = user("u1");
        assertThat(limiter().usage(user, tier))
                .as("[U1] a user never seen")
                .extracting(Decision.Usage::used)
                .containsExactly(0L, 0L);
        limiter().reserve(user, tier, 400, List.of(upstream));
        clock().advance(Duration.ofSeconds(15));
        for (int i = 0; i < 5; i++) {
            List<Decision.Usage> usage = limiter().usage(user, tier);
            assertThat(usage)
                    .as("[U1] peek %d: requests then tokens", i + 1)
                    .extracting(Decision.Usage::used)
                    .containsExactly(1L, 400L);
            assertThat(usage.get(1).resetAfter())
                    .as("[U1] the reservation leaves 45 s from now")
                    .isEqualTo(Duration.ofSeconds(45));
            assertThat(usage.get(1).remaining()).as("[U1] tokens remaining").isEqualTo(600);
        }
        List<Decision.Usage> shared = limiter().usage(upstream);
        assertThat(shared)
                .as("[U1] the shared budget")
                .extracting(Decision.Usage::used)
                .containsExactly(400L);
        assertThat(shared.get(0).budget()).as("[U1] names the budget").isEqualTo(upstream.name());
        for (int i = 0; i < 2; i++) {
            assertThat(limiter().check(user, tier).allowed())
                    .as("[U1] peeks took no slot: check %d", i + 1)
                    .isTrue();
        }
        assertThat(limiter().check(user, tier).allowed())
                .as("[U1] the fourth request of 3")
                .isFalse();
    }
}
