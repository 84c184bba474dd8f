package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.testkit.MutableClock;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tag;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Differential testing: random sequences of checks and reservations (two users, several window
 * sets mixing request, token and precision windows, a shared budget, commits and cancels, usage
 * looks, clock steps from 0 ms to two windows) run on {@link ExactModelStore}, the in-memory store, and the
 * Lettuce and Jedis stores over a real Redis, each through its own limiter and injected clock;
 * every decision must be identical: allowed, remaining, retry, deciding window, budget, and every
 * window's usage. Budget leases on the shared budget (taken and returned at the store, stamped at
 * their end, or one returned and the next taken in one call) are mixed in, and their evaluations
 * must be identical too.
 */
class DifferentialTest {

    private static final Instant T0 = Instant.parse("2026-03-01T00:00:00Z");

    /** Window sets a reservation may use; small limits so that sequences hit them. */
    private static final List<Tier> TIERS = List.of(
            Tier.of("requests", Window.of(3, Duration.ofSeconds(10))),
            Tier.of("mixed", Window.of(3, Duration.ofSeconds(10)), Window.tokens(100, Duration.ofSeconds(30))),
            Tier.of(
                    "precise",
                    Window.of(5, Duration.ofSeconds(60)).withPrecision(Duration.ofSeconds(10)),
                    Window.tokens(200, Duration.ofSeconds(60)).withPrecision(Duration.ofSeconds(10))),
            Tier.of(
                    "all",
                    Window.tokens(50, Duration.ofSeconds(10)),
                    Window.of(4, Duration.ofSeconds(20)),
                    Window.of(6, Duration.ofSeconds(60)).withPrecision(Duration.ofSeconds(15))));

    private static final SharedBudget UPSTREAM = SharedBudget.of(
            "upstream", Window.of(6, Duration.ofSeconds(20)), Window.tokens(300, Duration.ofSeconds(20)));

    // one server per driver: both stores would otherwise count the same keys
    private static RedisServer lettuceRedis;
    private static RedisServer jedisRedis;
    private static CloseableWindowStore lettuce;
    private static CloseableWindowStore jedis;

    /** One step of a sequence. */
    sealed interface Op permits Reserve, Settle, Advance, Peek, TakeLease, ReturnLease, ExchangeLease {}

    /** A budget lease on the shared budget, taken at the store: requests, tokens, duration in ms. */
    record TakeLease(long requests, long tokens, long durationMillis) implements Op {}

    /** The return of the n-th lease taken so far, if any, keeping some requests and tokens. */
    record ReturnLease(int lease, long requestsKept, long tokensKept) implements Op {}

    /**
     * The n-th lease taken so far returned, keeping some requests and tokens, and a new one taken in
     * the same call ({@code exchangeLease}; the model makes the return and the take one after the
     * other); with no lease taken yet, a take alone.
     */
    record ExchangeLease(int lease, long requestsKept, long tokensKept, TakeLease next) implements Op {}

    /** A reservation: user 0 or 1, a tier, tokens, with or without the shared budget. */
    record Reserve(int user, int tier, long tokens, boolean shared) implements Op {}

    /** A commit (actual ≥ 0) or a cancel (actual −1) of the n-th reservation so far, if any. */
    record Settle(int reservation, long actual) implements Op {}

    /** A look at a user's windows and the shared budget's, charging nothing. */
    record Peek(int user, int tier) implements Op {}

    /** The clock moves on. */
    record Advance(long millis) implements Op {}

    @BeforeContainer
    static void start() {
        lettuceRedis = RedisServer.start();
        jedisRedis = RedisServer.start();
        lettuce = Driver.LETTUCE.standalone(lettuceRedis);
        jedis = Driver.JEDIS.standalone(jedisRedis);
    }

    @AfterContainer
    static void stop() {
        lettuce.close();
        jedis.close();
        lettuceRedis.close();
        jedisRedis.close();
    }

    @Property(tries = 2_000)
    void inMemoryMatchesTheModel(@ForAll("sequences") List<Op> ops) {
        run(ops, false);
    }

    @Property(tries = 200)
    void redisStoresMatchTheModel(@ForAll("sequences") List<Op> ops) {
        run(ops, true);
    }

    /** The long run, in the fault profile ({@code -Pfaults}) that CI runs after the default build. */
    @Property(tries = 20_000)
    @Tag("faults")
    void inMemoryMatchesTheModelAtLength(@ForAll("sequences") List<Op> ops) {
        run(ops, false);
    }

    /** The long run against Redis, in the fault profile. */
    @Property(tries = 2_000)
    @Tag("faults")
    void redisStoresMatchTheModelAtLength(@ForAll("sequences") List<Op> ops) {
        run(ops, true);
    }

    /**
     * The first sequence this test found against Redis: a cancel emptied the current step of a
     * precision window, and the ring then recorded the next entry a step late (it left the window
     * two steps after the exact log's entry, not at most one).
     */
    @Example
    void aCancelThatEmptiesTheCurrentStepLeavesTheNextEntryInIt() {
        run(List.of(new Reserve(0, 2, 0, false), new Settle(0, -1), new Reserve(0, 2, 0, false)), true);
    }

    /**
     * The second: a cancel emptied an older step, and the ring then reported the next entry's
     * window as growing again a step early (its oldest step pointed at the emptied one).
     */
    @Example
    void aCancelThatEmptiesAnOlderStepLeavesNoStaleOldestStep() {
        run(
                List.of(
                        new Reserve(0, 2, 0, false),
                        new Advance(20_000),
                        new Settle(0, -1),
                        new Reserve(0, 2, 0, false)),
                true);
    }

    /**
     * The third: a cancel emptied the only step, the ring stayed at that (now empty) step, and the
     * next entry, a step later, was reported as leaving with the emptied step: a step early.
     */
    @Example
    void anEntryAfterTheRingWasEmptiedIsReportedFromItsOwnStep() {
        run(
                List.of(
                        new Reserve(0, 2, 0, false),
                        new Advance(8_505),
                        new Settle(0, -1),
                        new Advance(1_495),
                        new Reserve(0, 2, 0, false)),
                true);
    }

    /**
     * The fourth: as the third, but the cancel came steps after the entry, so the emptied ring's
     * oldest step was the step of the cancel, above its newest.
     */
    @Example
    void anEntryAfterALateCancelEmptiedTheRingIsReportedFromItsOwnStep() {
        run(
                List.of(
                        new Advance(383),
                        new Reserve(0, 3, 0, false),
                        new Advance(41_684),
                        new Settle(0, -1),
                        new Advance(2_933),
                        new Reserve(0, 3, 1, false)),
                true);
    }

    private static void run(List<Op> ops, boolean withRedis) {
        MutableClock clock = MutableClock.at(T0);
        Map<String, WindowStore> stores = new LinkedHashMap<>();
        stores.put("model", new ExactModelStore());
        stores.put("in-memory", InMemoryWindowStore.create(clock));
        if (withRedis) {
            stores.put("lettuce", lettuce);
            stores.put("jedis", jedis);
        }
        Map<String, RateLimiter> limiters = new LinkedHashMap<>();
        stores.forEach((name, store) -> limiters.put(
                name,
                SlidingWindowRateLimiter.builder(store)
                        .clock(clock)
                        .failOpen(false)
                        .build()));
        String run = UUID.randomUUID().toString().substring(0, 8);
        Map<String, List<Reservation>> held = new LinkedHashMap<>();
        limiters.keySet().forEach(name -> held.put(name, new ArrayList<>()));
        List<Object[]> leases = new ArrayList<>(); // the lease, then each store's stamp
        int step = 0;
        for (Op op : ops) {
            step++;
            if (op instanceof TakeLease || op instanceof ExchangeLease) {
                TakeLease take = op instanceof ExchangeLease exchange ? exchange.next() : (TakeLease) op;
                Object[] returned = op instanceof ExchangeLease exchange && !leases.isEmpty()
                        ? leases.get(exchange.lease() % leases.size())
                        : null;
                BudgetLease lease = new BudgetLease(
                        StoreRequest.Scope.shared(run + "-" + UPSTREAM.name(), UPSTREAM.windows()),
                        take.requests(),
                        take.tokens() == 0 ? Amounts.none() : Amounts.tokens(take.tokens()),
                        run + "-lease-" + step,
                        take.durationMillis());
                String expected = null;
                long stamp = -1;
                for (Map.Entry<String, WindowStore> store : stores.entrySet()) {
                    Evaluation evaluation;
                    if (returned != null) {
                        ExchangeLease exchange = (ExchangeLease) op;
                        evaluation = store.getValue()
                                .exchangeLease(
                                        (BudgetLease) returned[0],
                                        (Long) returned[1],
                                        exchange.requestsKept(),
                                        exchange.tokensKept() == 0
                                                ? Amounts.none()
                                                : Amounts.tokens(exchange.tokensKept()),
                                        lease,
                                        clock.millis());
                    } else {
                        evaluation = store.getValue().takeLease(lease, clock.millis());
                    }
                    if (expected == null) {
                        expected = evaluation.toString();
                        stamp = evaluation.isAllowed() ? lease.stampMillis(evaluation.nowMillis()) : -1;
                    } else {
                        assertThat(evaluation.toString())
                                .as(
                                        "step %d %s: %s takes the lease like the model; ops %s",
                                        step, op, store.getKey(), ops)
                                .isEqualTo(expected);
                    }
                }
                if (stamp >= 0) {
                    leases.add(new Object[] {lease, stamp});
                }
            } else if (op instanceof ReturnLease back) {
                if (!leases.isEmpty()) {
                    Object[] taken = leases.get(back.lease() % leases.size());
                    for (WindowStore store : stores.values()) {
                        store.returnLease(
                                (BudgetLease) taken[0],
                                (Long) taken[1],
                                back.requestsKept(),
                                back.tokensKept() == 0 ? Amounts.none() : Amounts.tokens(back.tokensKept()),
                                clock.millis());
                    }
                }
            } else if (op instanceof Advance advance) {
                clock.advance(Duration.ofMillis(advance.millis()));
            } else if (op instanceof Reserve reserve) {
                String user = run + "-u" + reserve.user();
                Tier tier = TIERS.get(reserve.tier());
                List<SharedBudget> shared = reserve.shared()
                        ? List.of(new SharedBudget(run + "-" + UPSTREAM.name(), UPSTREAM.windows()))
                        : List.of();
                Decision expected = null;
                for (Map.Entry<String, RateLimiter> limiter : limiters.entrySet()) {
                    Reservation reservation = limiter.getValue().reserve(user, tier, reserve.tokens(), shared);
                    held.get(limiter.getKey()).add(reservation);
                    if (expected == null) {
                        expected = reservation.decision();
                    } else {
                        assertThat(reservation.decision())
                                .as("step %d %s: %s decides like the model; ops %s", step, op, limiter.getKey(), ops)
                                .isEqualTo(expected);
                    }
                }
            } else if (op instanceof Peek peek) {
                String user = run + "-u" + peek.user();
                SharedBudget upstream = new SharedBudget(run + "-" + UPSTREAM.name(), UPSTREAM.windows());
                List<Decision.Usage> expected = null;
                List<Decision.Usage> expectedShared = null;
                for (Map.Entry<String, RateLimiter> limiter : limiters.entrySet()) {
                    List<Decision.Usage> usage = limiter.getValue().usage(user, TIERS.get(peek.tier()));
                    List<Decision.Usage> shared = limiter.getValue().usage(upstream);
                    if (expected == null) {
                        expected = usage;
                        expectedShared = shared;
                    } else {
                        assertThat(usage)
                                .as(
                                        "step %d %s: %s reports usage like the model; ops %s",
                                        step, op, limiter.getKey(), ops)
                                .isEqualTo(expected);
                        assertThat(shared)
                                .as("step %d %s: %s reports shared usage like the model", step, op, limiter.getKey())
                                .isEqualTo(expectedShared);
                    }
                }
            } else if (op instanceof Settle settle) {
                for (Map.Entry<String, List<Reservation>> reservations : held.entrySet()) {
                    List<Reservation> list = reservations.getValue();
                    if (list.isEmpty()) {
                        continue;
                    }
                    Reservation reservation = list.get(settle.reservation() % list.size());
                    (settle.actual() < 0 ? reservation.cancel() : reservation.commit(settle.actual()))
                            .toCompletableFuture()
                            .join();
                }
            }
        }
    }

    @Provide
    Arbitrary<List<Op>> sequences() {
        Arbitrary<Long> tokens = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just(0L)),
                Tuple.of(6, Arbitraries.longs().between(1, 120)),
                Tuple.of(1, Arbitraries.longs().between(121, 400)));
        Arbitrary<Op> reserve = Combinators.combine(
                        Arbitraries.integers().between(0, 1),
                        Arbitraries.integers().between(0, TIERS.size() - 1),
                        tokens,
                        Arbitraries.of(false, true))
                .as((user, tier, count, shared) -> (Op) new Reserve(user, tier, count, shared));
        Arbitrary<Op> settle = Combinators.combine(
                        Arbitraries.integers().between(0, 50),
                        Arbitraries.frequencyOf(
                                Tuple.of(1, Arbitraries.just(-1L)),
                                Tuple.of(3, Arbitraries.longs().between(0, 200))))
                .as((reservation, actual) -> (Op) new Settle(reservation, actual));
        // clock steps from 0 ms to two of the longest window (60 s)
        Arbitrary<Op> advance = Arbitraries.frequencyOf(
                        Tuple.of(3, Arbitraries.just(0L)),
                        Tuple.of(4, Arbitraries.longs().between(1, 2_000)),
                        Tuple.of(3, Arbitraries.longs().between(2_000, 120_000)))
                .map(millis -> (Op) new Advance(millis));
        Arbitrary<Op> peek = Combinators.combine(
                        Arbitraries.integers().between(0, 1),
                        Arbitraries.integers().between(0, TIERS.size() - 1))
                .as((user, tier) -> (Op) new Peek(user, tier));
        Arbitrary<Op> lease = Combinators.combine(
                        Arbitraries.longs().between(0, 4),
                        Arbitraries.longs().between(0, 200),
                        Arbitraries.longs().between(1, 1_000))
                .as((requests, count, duration) -> (Op) new TakeLease(requests, count, duration));
        Arbitrary<Op> giveBack = Combinators.combine(
                        Arbitraries.integers().between(0, 20),
                        Arbitraries.longs().between(0, 4),
                        Arbitraries.longs().between(0, 200))
                .as((index, requests, count) -> (Op) new ReturnLease(index, requests, count));
        Arbitrary<Op> exchange = Combinators.combine(
                        Arbitraries.integers().between(0, 20),
                        Arbitraries.longs().between(0, 4),
                        Arbitraries.longs().between(0, 200),
                        lease)
                .as((index, requests, count, next) -> (Op) new ExchangeLease(index, requests, count, (TakeLease) next));
        return Arbitraries.frequencyOf(
                        Tuple.of(6, reserve),
                        Tuple.of(1, exchange),
                        Tuple.of(2, settle),
                        Tuple.of(3, advance),
                        Tuple.of(1, peek),
                        Tuple.of(1, lease),
                        Tuple.of(1, giveBack))
                .list()
                .ofMinSize(1)
                .ofMaxSize(40);
    }
}
