package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section L: limits beyond 32 bits, such as a day's budget of a trillion tokens, stay exact. */
interface LargeLimitRules extends ConformanceSection {

    long TRILLION = 1_000_000_000_000L;

    @Test
    @DisplayName("L1 a token limit of 10^12 is counted to the token, in exact and precision windows")
    default void trillion() {
        Window exact = Window.tokens("tokens-day", TRILLION, DAY);
        Window coarse =
                Window.tokens("tokens-week", TRILLION, Duration.ofDays(7)).withPrecision(Duration.ofMinutes(1));
        Tier tier = Tier.of("l1", exact, coarse);
        String user = user("l1");
        Reservation big = limiter().reserve(user, tier, TRILLION - 1);
        assertThat(big.decision().allowed()).as("[L1] 10^12 - 1 tokens").isTrue();
        Decision last = limiter().reserve(user, tier, 1).decision();
        assertThat(last.allowed()).as("[L1] the last token").isTrue();
        assertThat(used(last, exact, null)).as("[L1] exact window").isEqualTo(TRILLION);
        assertThat(used(last, coarse, null)).as("[L1] precision window").isEqualTo(TRILLION);
        assertThat(limiter().reserve(user, tier, 1).decision().allowed())
                .as("[L1] one more")
                .isFalse();
        settled(big.commit(TRILLION - 1_001));
        Decision after = limiter().reserve(user, tier, 1_000).decision();
        assertThat(after.allowed()).as("[L1] 1,000 refunded").isTrue();
        assertThat(used(after, exact, null))
                .as("[L1] exact window after the refund")
                .isEqualTo(TRILLION);
        assertThat(used(after, coarse, null))
                .as("[L1] precision window after the refund")
                .isEqualTo(TRILLION);
    }
}
