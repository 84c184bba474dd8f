package dev.ratelimit.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.Evaluation;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScriptReplyTest {

    @Test
    void parsesAnAllowedReply() {
        Evaluation evaluation = ScriptReply.evaluation(List.of(1L, 777L, -1L, 0L, 3L, 60_000L, 4L, 3_500_000L), 2);
        assertThat(evaluation.isAllowed()).isTrue();
        assertThat(evaluation.nowMillis()).isEqualTo(777);
        assertThat(evaluation.used(0)).isEqualTo(3);
        assertThat(evaluation.resetAfterMillis(0)).isEqualTo(60_000);
        assertThat(evaluation.used(1)).isEqualTo(4);
        assertThat(evaluation.resetAfterMillis(1)).isEqualTo(3_500_000);
    }

    @Test
    void parsesARejectionAndATooLargeRequest() {
        Evaluation rejected = ScriptReply.evaluation(List.of(0L, 777L, 1L, 1234L, 2L, 10L, 100L, 20L), 2);
        assertThat(rejected.isAllowed()).isFalse();
        assertThat(rejected.rejectedIndex()).isEqualTo(1);
        assertThat(rejected.retryAfterMillis()).isEqualTo(1234);
        assertThat(rejected.used(1)).isEqualTo(100);
        Evaluation tooLarge = ScriptReply.evaluation(List.of(2L, 777L, 0L, 0L, 2L, 10L), 1);
        assertThat(tooLarge.isTooLarge()).isTrue();
        assertThat(tooLarge.rejectedIndex()).isZero();
    }

    @Test
    void malformedRepliesAreStoreFailures() {
        for (Object reply : Arrays.asList(
                null,
                "OK",
                List.of(),
                List.of(1L, 1L),
                List.of(0L, 1L, 2L, 1L, 1L, 1L),
                List.of(0L, 1L, 0L, 0L, 1L, 1L),
                List.of(3L, 1L, 0L, 0L, 1L, 1L),
                List.of(1L, 1L, -1L, 0L, -5L, 1L),
                List.of(1L, "1", -1L, 0L, 1L, 1L))) {
            assertThatThrownBy(() -> ScriptReply.evaluation(reply, 1))
                    .as(String.valueOf(reply))
                    .isInstanceOf(RateLimiterUnavailableException.class);
        }
        assertThatThrownBy(() -> ScriptReply.settled(List.of(0L))).isInstanceOf(RateLimiterUnavailableException.class);
    }
}
