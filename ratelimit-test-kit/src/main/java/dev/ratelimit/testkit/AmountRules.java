package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.api.Window.Unit;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Section A: windows of any unit. Besides requests and tokens a window may count any named unit,
 * such as micro-dollars of spend; a reservation carries an amount per unit, each window counts the
 * amount of its own unit, and every unit is reserved, settled and given back together, all or
 * nothing, as tokens are.
 */
interface AmountRules extends ConformanceSection {

    /** One dollar, in micro-dollars. */
    long DOLLAR = 1_000_000;

    /** 10 requests, 1,000 tokens and $1 per minute. */
    Tier SPEND = Tier.of(
            "a",
            Window.of(10, MINUTE),
            Window.tokens(1_000, MINUTE),
            Window.of("spend-minute", DOLLAR, MINUTE, Unit.USD_MICROS));

    /** The estimate of a call of {@code tokens} tokens costing {@code micros}. */
    static Amounts cost(long tokens, long micros) {
        return Amounts.tokens(tokens).and(Unit.USD_MICROS, micros);
    }

    @Test
    @DisplayName("A1 each window counts its own unit's amount, all or nothing: a reservation the spend window"
            + " rejects costs the request and token windows nothing")
    default void eachUnitCounts() {
        String user = user("a1");
        Decision first =
                limiter().reserve(user, SPEND, cost(100, 600_000), List.of()).decision();
        assertThat(first.allowed()).as("[A1] 100 tokens and $0.60").isTrue();
        assertThat(usedIn(first, 0)).as("[A1] requests").isEqualTo(1);
        assertThat(usedIn(first, 1)).as("[A1] tokens").isEqualTo(100);
        assertThat(usedIn(first, 2)).as("[A1] micro-dollars").isEqualTo(600_000);
        clock().advance(Duration.ofSeconds(10));
        Decision rejected =
                limiter().reserve(user, SPEND, cost(100, 500_000), List.of()).decision();
        assertThat(rejected.allowed()).as("[A1] $0.60 + $0.50 > $1").isFalse();
        assertThat(rejected.window())
                .as("[A1] the spend window rejects")
                .isEqualTo(SPEND.windows().get(2));
        Decision fits =
                limiter().reserve(user, SPEND, cost(900, 400_000), List.of()).decision();
        assertThat(fits.allowed())
                .as("[A1] 900 tokens and $0.40 fill both exactly")
                .isTrue();
        assertThat(usedIn(fits, 0))
                .as("[A1] the rejected reservation charged no request")
                .isEqualTo(2);
        assertThat(usedIn(fits, 1)).as("[A1] nor tokens").isEqualTo(1_000);
        assertThat(usedIn(fits, 2)).as("[A1] micro-dollars").isEqualTo(DOLLAR);
        Decision none =
                limiter().reserve(user, SPEND, Amounts.none(), List.of()).decision();
        assertThat(none.allowed())
                .as("[A1] a reservation naming no unit needs room for 1 in each full window")
                .isFalse();
    }

    @Test
    @DisplayName("A2 10 simultaneous reservations of $0.30 against $1.00 admit exactly 3")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void concurrentSpend() throws Exception {
        Tier dollar = Tier.of("a2", Window.of("spend-day", DOLLAR, DAY, Unit.USD_MICROS));
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            String user = user("a2-" + trial);
            int allowed = allowedOfRace(
                    10,
                    thread -> limiter()
                            .reserve(user, dollar, Amounts.of(Unit.USD_MICROS, 300_000), List.of())
                            .decision()
                            .allowed());
            assertThat(allowed)
                    .as("[A2] trial %d: admitted of 10 × $0.30, limit $1", trial)
                    .isEqualTo(3);
            Decision rest = limiter()
                    .reserve(user, dollar, Amounts.of(Unit.USD_MICROS, 100_000), List.of())
                    .decision();
            assertThat(used(rest, dollar.windows().get(0), null))
                    .as("[A2] trial %d: micro-dollars after the race and $0.10 more", trial)
                    .isEqualTo(DOLLAR);
        }
    }

    @Test
    @DisplayName("A3 a commit settles each unit to its own actual amount; a unit it does not name keeps its estimate")
    default void commitPerUnit() {
        String user = user("a3");
        Reservation first = limiter().reserve(user, SPEND, cost(500, 500_000), List.of());
        assertThat(first.decision().allowed()).as("[A3] 500 tokens, $0.50").isTrue();
        settled(first.commit(cost(200, 700_000)));
        Decision after =
                limiter().reserve(user, SPEND, Amounts.none(), List.of()).decision();
        assertThat(usedIn(after, 1)).as("[A3] tokens settled down to 200").isEqualTo(200);
        assertThat(usedIn(after, 2))
                .as("[A3] micro-dollars settled up to 700,000")
                .isEqualTo(700_000);
        Reservation second = limiter().reserve(user, SPEND, cost(300, 100_000), List.of());
        assertThat(second.decision().allowed()).as("[A3] 300 tokens, $0.10").isTrue();
        settled(second.commit(Amounts.tokens(50)));
        Decision last =
                limiter().reserve(user, SPEND, Amounts.none(), List.of()).decision();
        assertThat(usedIn(last, 1)).as("[A3] tokens settled to 50: 200 + 50").isEqualTo(250);
        assertThat(usedIn(last, 2))
                .as("[A3] micro-dollars not named by the commit keep the estimate: 700,000 + 100,000")
                .isEqualTo(800_000);
    }

    @Test
    @DisplayName("A4 a cancel gives back the request and every unit")
    default void cancelEveryUnit() {
        String user = user("a4");
        Reservation reservation = limiter().reserve(user, SPEND, cost(400, 900_000), List.of());
        assertThat(reservation.decision().allowed())
                .as("[A4] 400 tokens, $0.90")
                .isTrue();
        settled(reservation.cancel());
        Decision after =
                limiter().reserve(user, SPEND, cost(1_000, DOLLAR), List.of()).decision();
        assertThat(after.allowed()).as("[A4] the whole of every budget again").isTrue();
        assertThat(usedIn(after, 0)).as("[A4] requests").isEqualTo(1);
        assertThat(usedIn(after, 1)).as("[A4] tokens").isEqualTo(1_000);
        assertThat(usedIn(after, 2)).as("[A4] micro-dollars").isEqualTo(DOLLAR);
    }

    @Test
    @DisplayName("A5 an amount over a window of its unit is too large, naming that window, even when the others fit")
    default void tooLargePerUnit() {
        String user = user("a5");
        Evaluation direct = store().evaluate(new StoreRequest(
                List.of(StoreRequest.Scope.user(user, SPEND.windows())), cost(10, DOLLAR + 1), clock().millis()));
        assertThat(direct.isTooLarge())
                .as("[A5] the store's answer to $1.000001 of $1")
                .isTrue();
        assertThat(direct.rejectedIndex()).as("[A5] the spend window").isEqualTo(2);
        Decision decision =
                limiter().reserve(user, SPEND, cost(10, DOLLAR + 1), List.of()).decision();
        assertThat(decision.tooLarge())
                .as("[A5] the limiter says it can never fit")
                .isTrue();
        assertThat(decision.window())
                .as("[A5] naming the spend window")
                .isEqualTo(SPEND.windows().get(2));
        assertThat(decision.retryAfter()).as("[A5] with no retry").isZero();
        Decision whole =
                limiter().reserve(user, SPEND, cost(1_000, DOLLAR), List.of()).decision();
        assertThat(whole.allowed()).as("[A5] nothing was recorded").isTrue();
        assertThat(usedIn(whole, 0)).as("[A5] requests").isEqualTo(1);
    }

    @Test
    @DisplayName("A6 a rejection's retry is when enough of the rejecting window's unit has left for it to fit,"
            + " to the millisecond")
    default void retryPerUnit() {
        String user = user("a6");
        assertThat(limiter()
                        .reserve(user, SPEND, cost(800, 200_000), List.of())
                        .decision()
                        .allowed())
                .as("[A6] 800 tokens and $0.20 at t0")
                .isTrue();
        clock().advance(Duration.ofSeconds(10));
        assertThat(limiter()
                        .reserve(user, SPEND, cost(10, 600_000), List.of())
                        .decision()
                        .allowed())
                .as("[A6] 10 tokens and $0.60 at t0 + 10 s")
                .isTrue();
        clock().advance(Duration.ofSeconds(10));
        Decision rejected =
                limiter().reserve(user, SPEND, cost(10, 500_000), List.of()).decision();
        assertThat(rejected.window())
                .as("[A6] spend rejects; tokens have room")
                .isEqualTo(SPEND.windows().get(2));
        assertThat(rejected.retryAfter())
                .as("[A6] $0.30 must leave: the t0 entry ($0.20) is not enough, the t0 + 10 s one is: 50 s")
                .isEqualTo(Duration.ofSeconds(50));
        clock().advance(Duration.ofSeconds(50).minusMillis(1));
        assertThat(limiter()
                        .reserve(user, SPEND, cost(10, 500_000), List.of())
                        .decision()
                        .allowed())
                .as("[A6] one millisecond before")
                .isFalse();
        clock().advanceMillis(1);
        assertThat(limiter()
                        .reserve(user, SPEND, cost(10, 500_000), List.of())
                        .decision()
                        .allowed())
                .as("[A6] at the retry time")
                .isTrue();
    }

    @Test
    @DisplayName("A7 a 30-day spend window at 1-hour steps never admits more than its limit, settles in the"
            + " reservation's step, and gives money back at most one step late")
    default void precisionSpend() {
        Window month = Window.of("spend-month", 100 * DOLLAR, Duration.ofDays(30), Unit.USD_MICROS)
                .withPrecision(HOUR);
        Tier monthly = Tier.of("a7", month);
        String user = user("a7");
        clock().advance(Duration.ofMinutes(30)); // half way through a step
        Reservation big = limiter().reserve(user, monthly, Amounts.of(Unit.USD_MICROS, 60 * DOLLAR), List.of());
        assertThat(big.decision().allowed()).as("[A7] $60").isTrue();
        clock().advance(Duration.ofDays(1));
        assertThat(limiter()
                        .reserve(user, monthly, Amounts.of(Unit.USD_MICROS, 40 * DOLLAR + 1), List.of())
                        .decision()
                        .allowed())
                .as("[A7] $40.000001 more exceeds $100")
                .isFalse();
        settled(big.commit(Amounts.of(Unit.USD_MICROS, 50 * DOLLAR)));
        Decision after = limiter()
                .reserve(user, monthly, Amounts.of(Unit.USD_MICROS, 50 * DOLLAR), List.of())
                .decision();
        assertThat(after.allowed())
                .as("[A7] the $10 refund landed in the first reservation's step")
                .isTrue();
        assertThat(used(after, month, null)).as("[A7] micro-dollars").isEqualTo(100 * DOLLAR);
        // the first reservation was made at 0:30 of its hour: it leaves at the end of that hour + 30 days
        clock().set(START.plus(Duration.ofDays(30)).plus(HOUR).minusMillis(1));
        assertThat(limiter()
                        .reserve(user, monthly, Amounts.of(Unit.USD_MICROS, 1), List.of())
                        .decision()
                        .allowed())
                .as("[A7] still full a millisecond before the step's end + 30 days")
                .isFalse();
        clock().set(START.plus(Duration.ofDays(30)).plus(HOUR));
        Decision back = limiter()
                .reserve(user, monthly, Amounts.of(Unit.USD_MICROS, 50 * DOLLAR), List.of())
                .decision();
        assertThat(back.allowed())
                .as("[A7] the first $50 has left at the step's end + 30 days")
                .isTrue();
    }

    @Test
    @DisplayName("A8 sums stay exact up to 2^53 (about $9 billion in micro-dollars), through refunds")
    default void exactTo2Pow53() {
        long max = (1L << 53) - 1;
        Window exact = Window.of("spend-day", max, DAY, Unit.USD_MICROS);
        Window coarse = Window.of("spend-week", max, Duration.ofDays(7), Unit.USD_MICROS)
                .withPrecision(Duration.ofMinutes(1));
        Tier tier = Tier.of("a8", exact, coarse);
        String user = user("a8");
        Reservation big = limiter().reserve(user, tier, Amounts.of(Unit.USD_MICROS, max - 1), List.of());
        assertThat(big.decision().allowed()).as("[A8] 2^53 - 2").isTrue();
        Decision last = limiter()
                .reserve(user, tier, Amounts.of(Unit.USD_MICROS, 1), List.of())
                .decision();
        assertThat(last.allowed()).as("[A8] the last micro-dollar").isTrue();
        assertThat(used(last, exact, null)).as("[A8] exact window").isEqualTo(max);
        assertThat(used(last, coarse, null)).as("[A8] precision window").isEqualTo(max);
        assertThat(limiter()
                        .reserve(user, tier, Amounts.of(Unit.USD_MICROS, 1), List.of())
                        .decision()
                        .allowed())
                .as("[A8] one more")
                .isFalse();
        settled(big.commit(Amounts.of(Unit.USD_MICROS, max - 1 - 1_000)));
        Decision after = limiter()
                .reserve(user, tier, Amounts.of(Unit.USD_MICROS, 1_000), List.of())
                .decision();
        assertThat(after.allowed()).as("[A8] 1,000 refunded").isTrue();
        assertThat(used(after, exact, null))
                .as("[A8] exact window after the refund")
                .isEqualTo(max);
        assertThat(used(after, coarse, null))
                .as("[A8] precision window after the refund")
                .isEqualTo(max);
    }

    @Test
    @DisplayName("A9 a shared budget in money caps every member, and a member at their own cap leaves it untouched")
    default void sharedSpend() {
        SharedBudget team = SharedBudget.of(user("a9-team"), Window.of("team-spend", DOLLAR, DAY, Unit.USD_MICROS));
        Tier member = Tier.of("a9", Window.of("spend-day", 600_000, DAY, Unit.USD_MICROS));
        String alice = user("a9-alice");
        String bob = user("a9-bob");
        Amounts half = Amounts.of(Unit.USD_MICROS, 500_000);
        assertThat(limiter()
                        .reserve(alice, member, half, List.of(team))
                        .decision()
                        .allowed())
                .as("[A9] alice $0.50")
                .isTrue();
        Decision own = limiter()
                .reserve(alice, member, Amounts.of(Unit.USD_MICROS, 200_000), List.of(team))
                .decision();
        assertThat(own.allowed())
                .as("[A9] alice's own $0.60 refuses $0.20 more")
                .isFalse();
        assertThat(own.budget()).as("[A9] her own window decided").isNull();
        assertThat(limiter()
                        .reserve(bob, member, half, List.of(team))
                        .decision()
                        .allowed())
                .as("[A9] bob $0.50: the team's $1 is exactly full, so alice's refusal charged it nothing")
                .isTrue();
        Decision full = limiter()
                .reserve(bob, member, Amounts.of(Unit.USD_MICROS, 1), List.of(team))
                .decision();
        assertThat(full.allowed())
                .as("[A9] the team at its cap refuses a member with room")
                .isFalse();
        assertThat(full.budget()).as("[A9] naming the team").isEqualTo(team.name());
        assertThat(limiter().usage(bob, member).get(0).used())
                .as("[A9] ... and charging bob nothing")
                .isEqualTo(500_000);
    }

    @Test
    @DisplayName("A10 money in precision windows of a user and two shared budgets stays exact under a race:"
            + " 20 reservations of $0.10 by two members against their team's $1.00 admit exactly 10")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void levelsUnderRace() throws Exception {
        Tier member = Tier.of(
                "a10",
                Window.of(1_000, MINUTE),
                Window.of("spend-day", 600_000, DAY, Unit.USD_MICROS).withPrecision(MINUTE));
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            SharedBudget team = SharedBudget.of(
                    user("a10-team-" + trial),
                    Window.of("spend-month", DOLLAR, Duration.ofDays(30), Unit.USD_MICROS)
                            .withPrecision(HOUR));
            SharedBudget org = SharedBudget.of(
                    user("a10-org-" + trial),
                    Window.of("spend-month", 3 * DOLLAR, Duration.ofDays(30), Unit.USD_MICROS)
                            .withPrecision(HOUR));
            List<String> members = List.of(user("a10-alice-" + trial), user("a10-bob-" + trial));
            int allowed = allowedOfRace(
                    20,
                    thread -> limiter()
                            .reserve(
                                    members.get(thread % 2),
                                    member,
                                    Amounts.of(Unit.USD_MICROS, 100_000),
                                    List.of(team, org))
                            .decision()
                            .allowed());
            assertThat(allowed)
                    .as("[A10] trial %d: admitted of 20 × $0.10 against the team's $1.00", trial)
                    .isEqualTo(10);
            assertThat(limiter().usage(team).get(0).used())
                    .as("[A10] trial %d: the team's window", trial)
                    .isEqualTo(DOLLAR);
            assertThat(limiter().usage(org).get(0).used())
                    .as("[A10] trial %d: the organisation's window", trial)
                    .isEqualTo(DOLLAR);
        }
    }

    private long usedIn(Decision decision, int index) {
        return used(decision, SPEND.windows().get(index), null);
    }
}
