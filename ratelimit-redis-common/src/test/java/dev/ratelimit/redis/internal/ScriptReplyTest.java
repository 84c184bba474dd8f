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
        Evaluation evaluation = ScriptReply.parse(List.of(1L, 3L, 60_000L, 4L, 3_500_000L), 2);
        assertThat(evaluation.isAllowed()).isTrue();
        assertThat(evaluation.used(0)).isEqualTo(3);
        assertThat(evaluation.resetAfterMillis(0)).isEqualTo(60_000);
        assertThat(evaluation.used(1)).isEqualTo(4);
        assertThat(evaluation.resetAfterMillis(1)).isEqualTo(3_500_000);
    }

    @Test
    void parsesARejection() {
        Evaluation evaluation = ScriptReply.parse(List.of(0L, 1L, 100L, 1234L), 2);
        assertThat(evaluation.isAllowed()).isFalse();
        assertThat(evaluation.rejectedIndex()).isEqualTo(1);
        assertThat(evaluation.used(1)).isEqualTo(100);
        assertThat(evaluation.resetAfterMillis(1)).isEqualTo(1234);
    }

    @Test
    void malformedRepliesAreStoreFailures() {
        for (Object reply : Arrays.asList(
                null,
                "OK",
                List.of(),
                List.of(1L, 1L),
                List.of(0L, 2L, 1L, 1L),
                List.of(0L, 0L, 1L),
                List.of(2L, 1L, 1L),
                List.of(1L, "1", 1L))) {
            assertThatThrownBy(() -> ScriptReply.parse(reply, 1))
                    .as(String.valueOf(reply))
                    .isInstanceOf(RateLimiterUnavailableException.class);
        }
    }
}
