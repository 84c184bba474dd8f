package dev.ratelimit.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import dev.ratelimit.testsupport.redis.RespClient;
import dev.ratelimit.testsupport.redis.RespException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The script itself, run over a raw RESP connection on a private server: no driver involved. */
class SlidingWindowScriptTest {

    private static final long T0 = 1_767_225_600_000L; // 2026-01-01T00:00:00Z

    @RegisterExtension
    static final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private static RespClient raw;

    @BeforeAll
    static void connect() {
        raw = redis.get().connect();
    }

    @AfterAll
    static void disconnect() {
        raw.close();
    }

    private static Evaluation run(ScriptCall call) {
        List<String> command =
                new ArrayList<>(List.of("EVAL", SlidingWindowScript.source(), Integer.toString(call.windowCount())));
        command.addAll(call.keyList());
        command.addAll(call.argList());
        return ScriptReply.parse(raw.call(command.toArray(String[]::new)), call.windowCount());
    }

    private static StoreRequest request(String user, long now, int permits, Window... windows) {
        return new StoreRequest(user, List.of(windows), permits, now);
    }

    private static String user() {
        return "script-" + UUID.randomUUID();
    }

    @Test
    void shaIsTheOneRedisComputes() {
        assertThat(raw.call("SCRIPT", "LOAD", SlidingWindowScript.source())).isEqualTo(SlidingWindowScript.sha1());
    }

    @Test
    void retryIsExactToTheMillisecond() {
        String user = user();
        Window window = new Window("second", 2, Duration.ofSeconds(1));
        assertThat(run(ScriptCall.of(request(user, T0, 1, window), KeyLayout.STANDALONE))
                        .isAllowed())
                .isTrue();
        assertThat(run(ScriptCall.of(request(user, T0 + 300, 1, window), KeyLayout.STANDALONE))
                        .isAllowed())
                .isTrue();
        Evaluation rejected = run(ScriptCall.of(request(user, T0 + 400, 1, window), KeyLayout.STANDALONE));
        assertThat(rejected.isAllowed()).isFalse();
        assertThat(rejected.resetAfterMillis(0)).isEqualTo(600);
        assertThat(run(ScriptCall.of(request(user, T0 + 999, 1, window), KeyLayout.STANDALONE))
                        .isAllowed())
                .isFalse();
        Evaluation allowed = run(ScriptCall.of(request(user, T0 + 1000, 1, window), KeyLayout.STANDALONE));
        assertThat(allowed.isAllowed()).isTrue();
        assertThat(allowed.used(0)).isEqualTo(2);
        assertThat(allowed.resetAfterMillis(0)).isEqualTo(300); // the entry at T0 + 300 is now the oldest
    }

    @Test
    void permitsAreCountedAsEntriesAndAllOrNothing() {
        String user = user();
        Window minute = new Window("minute", 10, Duration.ofMinutes(1));
        Window hour = new Window("hour", 12, Duration.ofHours(1));
        Evaluation first = run(ScriptCall.of(request(user, T0, 7, minute, hour), KeyLayout.STANDALONE));
        assertThat(first.isAllowed()).isTrue();
        assertThat(first.used(0)).isEqualTo(7);
        assertThat(first.used(1)).isEqualTo(7);
        Evaluation second = run(ScriptCall.of(request(user, T0 + 1, 4, minute, hour), KeyLayout.STANDALONE));
        assertThat(second.isAllowed()).isFalse();
        assertThat(second.rejectedIndex()).isZero();
        assertThat(second.used(0)).isEqualTo(7);
        Evaluation third = run(ScriptCall.of(request(user, T0 + 60_000, 6, minute, hour), KeyLayout.STANDALONE));
        assertThat(third.isAllowed()).isFalse();
        assertThat(third.rejectedIndex()).isEqualTo(1);
        assertThat(third.resetAfterMillis(1)).isEqualTo(3_600_000 - 60_000);
        assertThat(raw.call("ZCARD", KeyLayout.STANDALONE.key(user, 60))).isEqualTo(0L);
        assertThat(raw.call("ZCARD", KeyLayout.STANDALONE.key(user, 3600))).isEqualTo(7L);
    }

    @Test
    void permitsAboveTheLimitOfAnEmptyWindowAreRejectedWithTheWindowLength() {
        Evaluation evaluation = run(ScriptCall.of(
                request(user(), T0, 5, new Window("minute", 3, Duration.ofMinutes(1))), KeyLayout.STANDALONE));
        assertThat(evaluation.isAllowed()).isFalse();
        assertThat(evaluation.resetAfterMillis(0)).isEqualTo(60_000);
    }

    @Test
    void largePermitCountsAreRecordedInChunks() {
        String user = user();
        Evaluation evaluation = run(ScriptCall.of(
                request(user, T0, 5_000, new Window("day", 100_000, Duration.ofDays(1))), KeyLayout.STANDALONE));
        assertThat(evaluation.used(0)).isEqualTo(5_000);
        assertThat(raw.call("ZCARD", KeyLayout.STANDALONE.key(user, 86_400))).isEqualTo(5_000L);
    }

    @Test
    void serverTimeIsUsedWithoutAClientTimestamp() {
        String user = user();
        Evaluation evaluation = run(ScriptCall.of(
                request(user, StoreRequest.STORE_TIME, 1, new Window("minute", 3, Duration.ofMinutes(1))),
                KeyLayout.STANDALONE));
        assertThat(evaluation.isAllowed()).isTrue();
        List<?> time = (List<?>) raw.call("TIME");
        long serverMillis = Long.parseLong((String) time.get(0)) * 1000;
        List<?> entry = (List<?>) raw.call("ZRANGE", KeyLayout.STANDALONE.key(user, 60), "0", "0", "WITHSCORES");
        long score = Long.parseLong((String) entry.get(1));
        assertThat(score).isBetween(serverMillis - 5_000, serverMillis + 5_000);
    }

    @Test
    void scoresKeepEveryDigit() {
        String user = user();
        long now = 9_007_199_254_000L; // far beyond Lua's 14-digit default number format
        run(ScriptCall.of(request(user, now, 1, Window.of(3, Duration.ofMinutes(1))), KeyLayout.STANDALONE));
        List<?> entry = (List<?>) raw.call("ZRANGE", KeyLayout.STANDALONE.key(user, 60), "0", "0", "WITHSCORES");
        assertThat(entry.get(1)).isEqualTo(Long.toString(now));
        Evaluation later = run(ScriptCall.of(
                request(user, now + 59_999, 1, Window.of(3, Duration.ofMinutes(1))), KeyLayout.STANDALONE));
        assertThat(later.used(0)).isEqualTo(2);
        assertThat(later.resetAfterMillis(0)).isEqualTo(1);
    }

    @Test
    void badArgumentsAreAnError() {
        assertThatThrownBy(() -> raw.call("EVAL", SlidingWindowScript.source(), "1", "k", "1", "1"))
                .isInstanceOf(RespException.class)
                .hasMessageContaining("sliding_window");
    }

    @Test
    void membersAreUnique() {
        assertThat(MemberIds.next()).isNotEqualTo(MemberIds.next());
    }
}
