package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Section W: token windows. A token window counts the tokens a reservation declares; request
 * windows next to it count the request once; all windows admit a reservation or none is charged.
 */
interface WeightedRules extends ConformanceSection {

    /** 10 requests and 1,000 tokens per minute. */
    Tier TOKENS = Tier.of("w", Window.of(10, MINUTE), Window.tokens(1_000, MINUTE));

    @Test
    @DisplayName("W1 a token window counts the tokens reserved, a request window counts 1, all or nothing")
    default void tokensCount() {
        String user = user("w1");
        Decision first = limiter().reserve(user, TOKENS, 400).decision();
        assertThat(first.allowed()).as("[W1] 400 of 1,000 tokens").isTrue();
        assertThat(usedIn(first, TOKENS, 0)).as("[W1] requests after the first").isEqualTo(1);
        assertThat(usedIn(first, TOKENS, 1)).as("[W1] tokens after the first").isEqualTo(400);
        clock().advance(Duration.ofSeconds(10));
        assertThat(usedIn(limiter().reserve(user, TOKENS, 500).decision(), TOKENS, 1))
                .as("[W1] tokens after 400 + 500")
                .isEqualTo(900);
        clock().advance(Duration.ofSeconds(10));
        Decision rejected = limiter().reserve(user, TOKENS, 200).decision();
        assertThat(rejected.allowed()).as("[W1] 900 + 200 > 1,000").isFalse();
        assertThat(rejected.window())
                .as("[W1] the token window rejects")
                .isEqualTo(TOKENS.windows().get(1));
        Decision exact = limiter().reserve(user, TOKENS, 100).decision();
        assertThat(exact.allowed()).as("[W1] 900 + 100 fits exactly").isTrue();
        assertThat(usedIn(exact, TOKENS, 0))
                .as("[W1] the rejected reservation was not charged to the request window")
                .isEqualTo(3);
        assertThat(usedIn(exact, TOKENS, 1)).as("[W1] tokens after 900 + 100").isEqualTo(1_000);
    }

    @Test
    @DisplayName("W2 a token rejection's retry is when enough tokens have left for it to fit, to the millisecond")
    default void weightedRetry() {
        String user = user("w2");
        assertThat(limiter().reserve(user, TOKENS, 200).decision().allowed())
                .as("[W2] 200 at t0")
                .isTrue();
        clock().advance(Duration.ofSeconds(10));
        assertThat(limiter().reserve(user, TOKENS, 600).decision().allowed())
                .as("[W2] 600 at t0 + 10 s")
                .isTrue();
        clock().advance(Duration.ofSeconds(10));
        Decision rejected = limiter().reserve(user, TOKENS, 500).decision();
        assertThat(rejected.allowed()).as("[W2] 800 + 500 > 1,000 at t0 + 20 s").isFalse();
        assertThat(rejected.retryAfter())
                .as("[W2] 300 must leave: the t0 entry (200) is not enough, the t0 + 10 s one is: 50 s from now")
                .isEqualTo(Duration.ofSeconds(50));
        clock().advance(Duration.ofSeconds(50).minusMillis(1));
        assertThat(limiter().reserve(user, TOKENS, 500).decision().allowed())
                .as("[W2] one millisecond before the retry time")
                .isFalse();
        clock().advanceMillis(1);
        assertThat(limiter().reserve(user, TOKENS, 500).decision().allowed())
                .as("[W2] at the retry time")
                .isTrue();
    }

    @Test
    @DisplayName(
            "W3 a reservation larger than a token window's limit is too large: rejected, no retry, nothing recorded")
    default void tooLarge() {
        String user = user("w3");
        Evaluation direct =
                store().evaluate(new StoreRequest(user, List.of(TOKENS.windows().get(1)), 1_001, clock().millis()));
        assertThat(direct.isTooLarge())
                .as("[W3] the store's answer to 1,001 of 1,000")
                .isTrue();
        assertThat(direct.rejectedIndex()).as("[W3] the window too small").isZero();
        Decision decision = limiter().reserve(user, TOKENS, 1_001).decision();
        assertThat(decision.allowed()).as("[W3] the limiter's decision").isFalse();
        assertThat(decision.tooLarge()).as("[W3] says it can never fit").isTrue();
        assertThat(decision.retryAfter()).as("[W3] and gives no retry time").isZero();
        Decision whole = limiter().reserve(user, TOKENS, 1_000).decision();
        assertThat(whole.allowed()).as("[W3] the whole budget is still there").isTrue();
        assertThat(usedIn(whole, TOKENS, 0))
                .as("[W3] requests counted: the too large ones recorded nothing")
                .isEqualTo(1);
    }

    @Test
    @DisplayName("W4 10 simultaneous reservations of 300 tokens against 1,000 admit exactly 3")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void concurrentWeights() throws Exception {
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            String user = user("w4-" + trial);
            int allowed = allowedOfRace(
                    10,
                    thread -> limiter().reserve(user, TOKENS, 300).decision().allowed());
            assertThat(allowed)
                    .as("[W4] trial %d: admitted of 10 × 300 tokens, limit 1,000", trial)
                    .isEqualTo(3);
            assertThat(usedIn(limiter().reserve(user, TOKENS, 100).decision(), TOKENS, 1))
                    .as("[W4] trial %d: tokens counted after the race and 100 more", trial)
                    .isEqualTo(1_000);
        }
    }

    @Test
    @DisplayName("W5 a used-up token window rejects even a check that reserves no tokens, until tokens leave")
    default void usedUpRejectsChecks() {
        String user = user("w5");
        assertThat(limiter().reserve(user, TOKENS, 1_000).decision().allowed())
                .as("[W5] the whole token budget")
                .isTrue();
        clock().advance(Duration.ofSeconds(20));
        Decision check = limiter().check(user, TOKENS);
        assertThat(check.allowed()).as("[W5] a check with no tokens left").isFalse();
        assertThat(check.window())
                .as("[W5] rejected by the token window")
                .isEqualTo(TOKENS.windows().get(1));
        assertThat(check.retryAfter()).as("[W5] until the 1,000 tokens leave").isEqualTo(Duration.ofSeconds(40));
        clock().advance(Duration.ofSeconds(40));
        assertThat(limiter().check(user, TOKENS).allowed())
                .as("[W5] once they left")
                .isTrue();
    }

    private long usedIn(Decision decision, Tier tier, int index) {
        return used(decision, tier.windows().get(index), null);
    }
}
