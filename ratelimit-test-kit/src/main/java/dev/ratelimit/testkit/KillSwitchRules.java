package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section K: the kill switch. */
interface KillSwitchRules extends ConformanceSection {

    @Test
    @DisplayName("K1 a disabled limiter allows everything with the full budget and never touches the store")
    default void disabledLimiter() {
        RateLimiter disabled = kit().limiterFor(kit().counting, true);
        String user = user("k1");
        for (int i = 0; i < 20; i++) {
            Decision decision = disabled.check(user, 1, MINUTE);
            assertThat(decision.allowed()).as("[K1] allowed").isTrue();
            assertThat(decision.remaining()).as("[K1] remaining == limit").isEqualTo(1);
            assertThat(decision.retryAfterSeconds()).isZero();
            assertThat(disabled.checkAsync(user, 1, MINUTE)
                            .toCompletableFuture()
                            .join()
                            .allowed())
                    .isTrue();
        }
        assertThat(kit().counting.calls()).as("[K1] store calls").isZero();
    }
}
