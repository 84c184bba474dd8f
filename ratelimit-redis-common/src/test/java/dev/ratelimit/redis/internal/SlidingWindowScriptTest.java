package dev.ratelimit.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.CalendarPeriod;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
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
    private static final KeySpace KEYS = KeySpace.of(KeyLayout.STANDALONE);

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

    private static <T> T run(ScriptCall<T> call) {
        String[] keys = call.keys();
        List<String> command =
                new ArrayList<>(List.of("EVAL", SlidingWindowScript.source(), Integer.toString(keys.length)));
        command.addAll(List.of(keys));
        command.addAll(List.of(call.args()));
        return call.read(raw.call(command.toArray(String[]::new)));
    }

    private static Evaluation reserve(String user, long now, long tokens, Window... windows) {
        return run(ScriptCall.reserve(new StoreRequest(user, List.of(windows), tokens, now), KEYS));
    }

    private static String key(String user, Window window) {
        return KEYS.key(StoreRequest.Scope.user(user, List.of(window)), window);
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
        assertThat(reserve(user, T0, 0, window).isAllowed()).isTrue();
        assertThat(reserve(user, T0 + 300, 0, window).isAllowed()).isTrue();
        Evaluation rejected = reserve(user, T0 + 400, 0, window);
        assertThat(rejected.isAllowed()).isFalse();
        assertThat(rejected.retryAfterMillis()).isEqualTo(600);
        assertThat(reserve(user, T0 + 999, 0, window).isAllowed()).isFalse();
        Evaluation allowed = reserve(user, T0 + 1000, 0, window);
        assertThat(allowed.isAllowed()).isTrue();
        assertThat(allowed.used(0)).isEqualTo(2);
        assertThat(allowed.resetAfterMillis(0)).isEqualTo(300); // the entry at T0 + 300 is now the oldest
    }

    @Test
    void exactRequestWindowsKeepOneMemberPerRequestAndTheirExpiry() {
        String user = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        Evaluation evaluation = reserve(user, T0, 4_000, minute);
        assertThat(evaluation.used(0))
                .as("a request window counts the request, not its tokens")
                .isEqualTo(1);
        assertThat(raw.call("ZCARD", key(user, minute))).isEqualTo(1L);
        assertThat((Long) raw.call("TTL", key(user, minute))).isBetween(60L, 61L);
    }

    @Test
    void aTokenReservationIsOneWeightedMemberAndASum() {
        String user = user();
        Window tokens = Window.tokens(1_000_000, Duration.ofMinutes(1));
        reserve(user, T0, 4_000, tokens);
        reserve(user, T0 + 1, 2_500, tokens);
        assertThat(raw.call("ZCARD", key(user, tokens)))
                .as("one member per reservation, whatever its tokens")
                .isEqualTo(2L);
        String sumKey = KEYS.sumKey(StoreRequest.Scope.user(user, List.of(tokens)), tokens);
        assertThat(raw.call("GET", sumKey)).isEqualTo("6500");
        assertThat((Long) raw.call("TTL", sumKey)).isBetween(60L, 61L);
    }

    @Test
    void aRejectionWritesNothingAndLeavesTheLongerWindowsAlone() {
        String user = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        Window tokens = Window.tokens(1_000, Duration.ofMinutes(1));
        Window day = Window.of(100, Duration.ofDays(1));
        reserve(user, T0, 900, minute, tokens, day);
        Evaluation rejected = reserve(user, T0 + 10, 200, minute, tokens, day);
        assertThat(rejected.rejectedIndex()).isEqualTo(1);
        assertThat(rejected.used(0)).isEqualTo(1);
        assertThat(rejected.evaluated(2))
                .as("the day window, longer than the rejecting one, is not evaluated")
                .isFalse();
        assertThat(rejected.used(2)).isEqualTo(Evaluation.NOT_EVALUATED);
        assertThat(rejected.resetAfterMillis(2)).isEqualTo(Evaluation.NOT_EVALUATED);
        assertThat(raw.call("ZCARD", key(user, minute))).isEqualTo(1L);
        assertThat(raw.call("ZCARD", key(user, day))).isEqualTo(1L);
    }

    @Test
    void settlingRefundsReplacesTheMemberAndOverrunsAddOne() {
        String user = user();
        Window tokens = Window.tokens(10_000, Duration.ofMinutes(1));
        StoreRequest request = new StoreRequest(user, List.of(tokens), 3_000, T0);
        Evaluation reserved = run(ScriptCall.reserve(request, KEYS));
        for (ScriptCall<Boolean> call : ScriptCall.settle(
                new Settlement(request.scopes(), request.entryId(), reserved.nowMillis(), 3_000, 1_000, T0 + 5, null),
                KEYS)) {
            run(call);
        }
        List<Object> members = (List<Object>) raw.call("ZRANGE", key(user, tokens), "0", "-1", "WITHSCORES");
        assertThat(members).containsExactly("1000:" + request.entryId(), Long.toString(T0));
        StoreRequest second = new StoreRequest(user, List.of(tokens), 100, T0 + 10);
        Evaluation reservedSecond = run(ScriptCall.reserve(second, KEYS));
        run(ScriptCall.settle(
                        new Settlement(
                                second.scopes(), second.entryId(), reservedSecond.nowMillis(), 100, 600, T0 + 20, null),
                        KEYS)
                .get(0));
        assertThat(reserve(user, T0 + 30, 0, tokens).used(0)).isEqualTo(1_600);
        assertThat(raw.call("ZSCORE", key(user, tokens), "500:" + second.entryId() + "+"))
                .as("the overrun is charged at the time of settling")
                .isEqualTo(Long.toString(T0 + 20));
    }

    @Test
    void twoDayWindowsAtMinutePrecisionTakeUnder64KilobytesWhenFull() {
        String user = "enterprise-" + UUID.randomUUID();
        Window requests = Window.of(100_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
        Window tokens = Window.tokens(1_000_000_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
        long admitted = 0;
        for (int minute = 0; minute < 1_440; minute++) {
            // 69 or 70 requests a minute: 100,000 a day, 10,000 tokens each; one call per minute carries them
            long n = (minute + 1) * 100_000L / 1_440 - minute * 100_000L / 1_440;
            for (int i = 0; i < n; i++) {
                Evaluation evaluation = reserve(user, T0 + minute * 60_000L + i, 10_000, requests, tokens);
                if (evaluation.isAllowed()) {
                    admitted++;
                }
            }
        }
        assertThat(admitted).isEqualTo(100_000);
        Evaluation full = reserve(user, T0 + 1_440 * 60_000L - 1, 0, requests, tokens);
        assertThat(full.isAllowed()).isFalse();
        long bytes = (Long) raw.call("MEMORY", "USAGE", key(user, requests))
                + (Long) raw.call("MEMORY", "USAGE", key(user, tokens));
        assertThat(bytes).as("MEMORY USAGE of both keys").isLessThanOrEqualTo(64 * 1024);
        long pttl = (Long) raw.call("PTTL", key(user, tokens));
        assertThat(pttl)
                .as("kept until the last step (ending at the day's end) leaves a day later, plus a second")
                .isPositive()
                .isLessThanOrEqualTo(86_400_000 + 60_000 + 1_000);
    }

    @Test
    void serverTimeIsUsedWithoutAClientTimestamp() {
        String user = user();
        Window minute = new Window("minute", 3, Duration.ofMinutes(1));
        Evaluation evaluation = reserve(user, StoreRequest.STORE_TIME, 0, minute);
        assertThat(evaluation.isAllowed()).isTrue();
        List<?> time = (List<?>) raw.call("TIME");
        long serverMillis = Long.parseLong((String) time.get(0)) * 1000;
        assertThat(evaluation.nowMillis()).isBetween(serverMillis - 5_000, serverMillis + 5_000);
        List<?> entry = (List<?>) raw.call("ZRANGE", key(user, minute), "0", "0", "WITHSCORES");
        assertThat(Long.parseLong((String) entry.get(1))).isEqualTo(evaluation.nowMillis());
    }

    @Test
    void onTheServersTimeTheCalendarPeriodHoldingItCounts() {
        String user = user();
        long now = serverMillis();
        // four period starts around the server's now: the middle period holds it and is the one counted
        String bounds =
                "c" + (now - 7_200_000) + ":" + (now - 3_600_000) + ":" + (now + 3_600_000) + ":" + (now + 7_200_000);
        Evaluation first = evaluate("r", user, bounds);
        assertThat(first.isAllowed()).isTrue();
        assertThat(first.resetAfterMillis(0)).isEqualTo(now + 3_600_000 - first.nowMillis());
        Evaluation full = evaluate("r", user, bounds);
        assertThat(full.isAllowed()).isFalse();
        assertThat(full.retryAfterMillis()).isEqualTo(now + 3_600_000 - full.nowMillis());
        assertThatThrownBy(() -> evaluate("r", user, "c" + (now + 3_600_000) + ":" + (now + 7_200_000)))
                .isInstanceOf(RespException.class)
                .hasMessageContaining("no calendar period of window 1 holds now");
    }

    /** Runs the script on a one-request calendar day in UTC with the period starts given, on the server's time. */
    private static Evaluation evaluate(String op, String user, String bounds) {
        Window day = Window.calendar("day", 1, Window.Unit.REQUESTS, CalendarPeriod.DAY);
        return ScriptReply.evaluation(
                raw.call(
                        "EVAL",
                        SlidingWindowScript.source(),
                        "1",
                        key(user, day),
                        op,
                        "",
                        UUID.randomUUID().toString(),
                        "",
                        "",
                        Long.toString(day.lengthMillis()),
                        "1",
                        "",
                        bounds),
                1);
    }

    private static long serverMillis() {
        List<?> time = (List<?>) raw.call("TIME");
        return Long.parseLong((String) time.get(0)) * 1000 + Long.parseLong((String) time.get(1)) / 1000;
    }

    @Test
    void scoresAndSumsKeepEveryDigit() {
        String user = user();
        long now = 9_007_199_254_000L; // far beyond Lua's 14-digit default number format
        Window minute = Window.of(3, Duration.ofMinutes(1));
        reserve(user, now, 0, minute);
        List<?> entry = (List<?>) raw.call("ZRANGE", key(user, minute), "0", "0", "WITHSCORES");
        assertThat(entry.get(1)).isEqualTo(Long.toString(now));
        Evaluation later = reserve(user, now + 59_999, 0, minute);
        assertThat(later.used(0)).isEqualTo(2);
        assertThat(later.resetAfterMillis(0)).isEqualTo(1);
        Window trillion = Window.tokens(1_000_000_000_000L, Duration.ofDays(1));
        assertThat(reserve(user, T0, 999_999_999_999L, trillion).used(0)).isEqualTo(999_999_999_999L);
        assertThat(reserve(user, T0, 1, trillion).used(0)).isEqualTo(1_000_000_000_000L);
    }

    @Test
    void badArgumentsAreAnError() {
        assertThatThrownBy(() -> raw.call("EVAL", SlidingWindowScript.source(), "1", "k", "r", "1"))
                .isInstanceOf(RespException.class)
                .hasMessageContaining("sliding_window");
    }

    @Test
    void aMalformedRingLeavesTheRingsRecordedBeforeItAsTheyWere() {
        String user = user();
        Window hour = Window.tokens("tph", 1_000, Duration.ofHours(1)).withPrecision(Duration.ofMinutes(1));
        Window day = Window.tokens("tpd", 10_000, Duration.ofDays(1)).withPrecision(Duration.ofMinutes(1));
        assertThat(reserve(user, T0, 100, hour, day).isAllowed()).isTrue();
        // the hour's ring is in its usual state (its newest step the current one): the reserve records it as it
        // reads it, before it reaches the day's window, whose amount, then limit, does not parse
        for (String[] bad : List.of(new String[] {"10000", "x"}, new String[] {"y", "100"})) {
            assertThatThrownBy(() -> raw.call(
                            "EVAL",
                            SlidingWindowScript.source(),
                            "2",
                            key(user, hour),
                            key(user, day),
                            "r",
                            Long.toString(T0 + 1),
                            user + "-bad",
                            "",
                            "",
                            "3600000",
                            "1000",
                            "100",
                            "60000",
                            "86400000",
                            bad[0],
                            bad[1],
                            "60000"))
                    .isInstanceOf(RespException.class)
                    .hasMessageContaining(
                            bad[1].equals("x") ? "bad amount for window 2" : "bad length or limit for window 2");
        }
        Evaluation next = reserve(user, T0 + 2, 100, hour, day);
        assertThat(new long[] {next.used(0), next.used(1)})
                .as("the malformed calls took their 100 back out of the hour's ring")
                .containsExactly(200, 200);
    }

    @Test
    void aBudgetLeaseIsStampedAtItsEndAndItsKeysOutliveIt() {
        String name = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        Window tokens = Window.tokens(1_000, Duration.ofMinutes(1));
        StoreRequest.Scope budget = StoreRequest.Scope.shared(name, List.of(minute, tokens));
        BudgetLease lease = new BudgetLease(budget, 3, Amounts.tokens(300), name + "-lease", 1_000);
        assertThat(run(ScriptCall.takeLease(lease, T0, KEYS)).isAllowed()).isTrue();
        String requests = KEYS.key(budget, minute);
        String stamp = Long.toString(T0 + 1_000);
        assertThat(raw.call("ZRANGE", requests, "0", "-1", "WITHSCORES"))
                .as("three members, the entry id first, all at the lease's end")
                .isEqualTo(List.of(name + "-lease", stamp, name + "-lease#2", stamp, name + "-lease#3", stamp));
        assertThat((Long) raw.call("TTL", requests))
                .as("kept a second past the lease's end plus the length")
                .isBetween(61L, 62L);
        run(ScriptCall.returnLease(lease, T0 + 1_000, 1, Amounts.tokens(100), T0 + 500, KEYS));
        assertThat(raw.call("ZRANGE", requests, "0", "-1")).isEqualTo(List.of(name + "-lease"));
        assertThat(raw.call("GET", KEYS.sumKey(budget, tokens))).isEqualTo("100");
    }

    @Test
    void anExchangeReturnsTheLeaseBeforeItTakesTheNextInOneCall() {
        String name = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        Window tokens = Window.tokens(1_000, Duration.ofMinutes(1));
        StoreRequest.Scope budget = StoreRequest.Scope.shared(name, List.of(minute, tokens));
        BudgetLease first = new BudgetLease(budget, 10, Amounts.tokens(1_000), name + "-a", 1_000);
        BudgetLease next = new BudgetLease(budget, 8, Amounts.tokens(900), name + "-b", 1_000);
        assertThat(run(ScriptCall.takeLease(first, T0, KEYS)).isAllowed()).isTrue();
        ScriptCall<?> exchange =
                ScriptCall.exchangeLease(first, T0 + 1_000, 2, Amounts.tokens(100), next, T0 + 500, KEYS);
        assertThat(exchange.keys())
                .as("the windows' keys, then the settled set: one call")
                .hasSize(4);
        assertThat(((dev.ratelimit.core.Evaluation) run(exchange)).isAllowed())
                .as("8 and 900 fit only once the first lease gave back 8 and 900")
                .isTrue();
        String stamp = Long.toString(T0 + 1_500);
        List<String> members = new java.util.ArrayList<>(List.of(name + "-a", name + "-a#2"));
        for (int i = 1; i <= 8; i++) {
            members.add(i == 1 ? name + "-b" : name + "-b#" + i);
        }
        assertThat(raw.call("ZRANGE", KEYS.key(budget, minute), "0", "-1"))
                .as("the first lease keeps 2 members, the next has its 8")
                .isEqualTo(members);
        assertThat(raw.call("ZSCORE", KEYS.key(budget, minute), name + "-b#8")).isEqualTo(stamp);
        assertThat(raw.call("GET", KEYS.sumKey(budget, tokens))).isEqualTo("1000");
        assertThat(raw.call("ZSCORE", KEYS.settledKey(budget), name + "-a"))
                .as("the return marked, so a second changes nothing")
                .isNotNull();
    }

    @Test
    void anExchangeOfAWindowThatIsNotALeaseWindowIsRefused() {
        String name = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        StoreRequest.Scope budget = StoreRequest.Scope.shared(name, List.of(minute));
        assertThatThrownBy(() -> raw.call(
                        "EVAL",
                        SlidingWindowScript.source(),
                        "2",
                        KEYS.key(budget, minute),
                        KEYS.settledKey(budget),
                        "x",
                        Long.toString(T0),
                        name + "-b",
                        (T0 + 1_000) + ":" + name + "-a",
                        "61000",
                        "60000",
                        "10",
                        "",
                        "0",
                        "1",
                        "1"))
                .isInstanceOf(RespException.class)
                .hasMessageContaining("not a lease window");
    }

    @Test
    void aLeaseStampedMoreThanASecondAheadIsRefused() {
        String name = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        String key = KEYS.key(StoreRequest.Scope.shared(name, List.of(minute)), minute);
        assertThatThrownBy(() -> raw.call(
                        "EVAL",
                        SlidingWindowScript.source(),
                        "1",
                        key,
                        "r",
                        Long.toString(T0),
                        name + "-lease",
                        "",
                        "",
                        "60000",
                        "10",
                        "",
                        "l1001:1"))
                .isInstanceOf(RespException.class)
                .hasMessageContaining("longer than 1000 ms");
    }

    @Test
    void oneReserveCallChargesAUsersWindowsAtNowAndTakesALeaseStampedAhead() {
        String name = user();
        Window minute = Window.of(10, Duration.ofMinutes(1));
        String own = key(name, minute);
        String cap = KEYS.key(StoreRequest.Scope.shared(name, List.of(minute)), minute);
        Object reply = raw.call(
                "EVAL",
                SlidingWindowScript.source(),
                "2",
                own,
                cap,
                "r",
                Long.toString(T0),
                name + "-call",
                "",
                "",
                "60000",
                "10",
                "",
                "0",
                "60000",
                "10",
                "",
                "l500:4");
        Evaluation evaluation = ScriptReply.evaluation(reply, 2);
        assertThat(evaluation.isAllowed()).isTrue();
        assertThat(new long[] {evaluation.used(0), evaluation.used(1)}).containsExactly(1, 4);
        assertThat(raw.call("ZRANGE", own, "0", "-1", "WITHSCORES"))
                .isEqualTo(List.of(name + "-call", Long.toString(T0)));
        assertThat(raw.call("ZCOUNT", cap, Long.toString(T0 + 500), Long.toString(T0 + 500)))
                .as("the lease's four members, at its end")
                .isEqualTo(4L);
    }
}
