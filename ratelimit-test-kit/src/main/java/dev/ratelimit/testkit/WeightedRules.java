package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Section W: requests that take several permits (token budgets), through the port directly. */
interface WeightedRules extends ConformanceSection {

    /** The window every weighted request of this section takes permits from. */
    Window TEN_PER_MINUTE = new Window("minute", 10, MINUTE);

    private Evaluation take(String user, int permits) {
        return store().evaluate(new StoreRequest(user, List.of(TEN_PER_MINUTE), permits, clock().millis()));
    }

    @Test
    @DisplayName("W1 a request of k permits counts k in every window, all or nothing")
    default void permitsCount() {
        String user = user("w1");
        Evaluation first = take(user, 4);
        assertThat(first.isAllowed()).as("[W1] 4 of 10").isTrue();
        assertThat(first.used(0)).as("[W1] used after 4 permits").isEqualTo(4);
        clock().advance(Duration.ofSeconds(10));
        assertThat(take(user, 4).used(0)).as("[W1] used after 8 permits").isEqualTo(8);
        clock().advance(Duration.ofSeconds(10));
        Evaluation rejected = take(user, 4);
        assertThat(rejected.isAllowed()).as("[W1] 8 + 4 > 10").isFalse();
        assertThat(rejected.used(0)).as("[W1] a rejection records nothing").isEqualTo(8);
        assertThat(take(user, 2).used(0)).as("[W1] 8 + 2 fits exactly").isEqualTo(10);
    }

    @Test
    @DisplayName("W2 a weighted rejection's retry is when enough permits leave, not just the oldest")
    default void weightedRetry() {
        String user = user("w2");
        assertThat(take(user, 2).isAllowed()).as("[W2] 2 of 10 at t0").isTrue();
        clock().advance(Duration.ofSeconds(10));
        assertThat(take(user, 6).isAllowed())
                .as("[W2] 6 more at t0 + 10 s, 8 of 10")
                .isTrue();
        clock().advance(Duration.ofSeconds(10));
        Evaluation rejected = take(user, 5); // needs 3 to leave: both t0 entries and one of t0 + 10 s
        assertThat(rejected.isAllowed()).as("[W2] 8 + 5 > 10 at t0 + 20 s").isFalse();
        assertThat(rejected.resetAfterMillis(0))
                .as("[W2] room for 5 returns when the t0 + 10 s entries leave, 50 s from now")
                .isEqualTo(50_000);
        clock().advance(Duration.ofSeconds(50));
        assertThat(take(user, 5).isAllowed()).as("[W2] at the retry time").isTrue();
    }

    @Test
    @DisplayName("W3 a request of more permits than the limit is rejected and records nothing")
    default void morePermitsThanTheLimit() {
        String user = user("w3");
        Evaluation rejected = take(user, 11);
        assertThat(rejected.isAllowed()).as("[W3] 11 of 10").isFalse();
        assertThat(rejected.used(0)).as("[W3] a rejection records nothing").isZero();
        assertThat(take(user, 10).isAllowed()).as("[W3] the budget is intact").isTrue();
    }
}
