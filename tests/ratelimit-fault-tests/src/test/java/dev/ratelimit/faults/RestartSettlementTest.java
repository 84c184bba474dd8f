package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Redis killed ({@code SIGKILL}) and started again under continuous load, with ten streams in flight
 * at every moment, for both drivers: afterwards every user's request, token and lease entries in
 * Redis, and the team's spend, are exactly what the store admitted and the calls really used —
 * settlements of streams that spanned the restart included — within {@link #SETTLED_WITHIN} of the
 * last response.
 *
 * <p>Redis keeps an append-only file fsynced at every write, as a persistent production Redis does,
 * so what it acknowledged before the kill is still there after it; five users hold tokens alone (their
 * windows fail open: degraded calls are admitted and recorded nowhere), five also spend from a team's
 * budget in money (which fails closed: those calls are refused while the store cannot decide).
 */
class RestartSettlementTest {

    static final Duration SETTLED_WITHIN = Duration.ofSeconds(2);
    private static final int STREAMS = 10;
    private static final long ESTIMATE_TOKENS = 93;
    private static final long ESTIMATE_MICROS = 500;

    private static final Tier TIER = Tier.of(
            "streams",
            Window.of("minute", 100_000, Duration.ofMinutes(1), Window.Unit.REQUESTS),
            Window.tokens("tokens-minute", 10_000_000, Duration.ofMinutes(1)));

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("kill -9 and restart under load with 10 streams in flight: entries and leases match real usage")
    void restartLosesNoSettlement(Driver driver) throws Exception {
        SharedBudget team = SharedBudget.of(
                "team-" + UUID.randomUUID(),
                Window.of("spend-month", 1_000_000_000, Duration.ofDays(30), Window.Unit.USD_MICROS)
                        .withPrecision(Duration.ofHours(1)));
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"));
                CloseableWindowStore store = driver.standalone(redis)) {
            MeterRegistry registry = new SimpleMeterRegistry();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .failOpen(true)
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .build();
            Tally tally = new Tally(UUID.randomUUID().toString());
            List<Thread> streams = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int s = 0; s < STREAMS; s++) {
                int user = s;
                List<SharedBudget> shared = s >= STREAMS / 2 ? List.of(team) : List.of();
                Thread thread = new Thread(
                        () -> {
                            try {
                                stream(limiter, tally, user, shared);
                            } catch (Throwable e) {
                                failures.add(e);
                            }
                        },
                        "stream-" + s);
                thread.start();
                streams.add(thread);
            }

            Thread.sleep(1_000);
            redis.kill();
            tally.epoch().incrementAndGet();
            Thread.sleep(1_000);
            redis.startAgain();
            tally.epoch().incrementAndGet();
            Thread.sleep(2_000);
            tally.stop().set(true);
            for (Thread thread : streams) {
                thread.join(30_000);
            }
            long lastResponse = System.nanoTime();
            assertThat(failures).isEmpty();

            long deadline = lastResponse + SETTLED_WITHIN.toNanos();
            List<String> mismatches = mismatches(limiter, tally, team);
            while (!mismatches.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
                mismatches = mismatches(limiter, tally, team);
            }
            long settledMillis =
                    Duration.ofNanos(System.nanoTime() - lastResponse).toMillis();
            long admitted = 0;
            for (int s = 0; s < STREAMS; s++) {
                admitted += tally.requests().get(s);
            }
            System.out.printf(
                    "%s restart: %d calls decided by the store, %d degraded, %d refused, %d streams spanned the"
                            + " kill; Redis matched the real usage %d ms after the last response; %s%n",
                    driver,
                    admitted,
                    tally.degraded().get(),
                    tally.refused().get(),
                    tally.spanned().get(),
                    settledMillis,
                    mismatches.isEmpty() ? "exact" : "mismatches " + mismatches);
            assertThat(mismatches)
                    .as(
                            "every entry and lease in Redis matches the real usage within %d ms of the last response",
                            SETTLED_WITHIN.toMillis())
                    .isEmpty();
            assertThat(tally.spanned().get())
                    .as("streams in flight across the kill")
                    .isPositive();
            assertThat(registry.find("ratelimit.settle.failures").counters())
                    .as("no settlement given up")
                    .isEmpty();
        }
    }

    /** What the clients of one run saw: per user what the store admitted and the calls used. */
    private record Tally(
            String run,
            AtomicBoolean stop,
            AtomicLong epoch,
            AtomicLongArray requests,
            AtomicLongArray tokens,
            AtomicLong spend,
            AtomicLong degraded,
            AtomicLong refused,
            AtomicLong spanned) {

        Tally(String run) {
            this(
                    run,
                    new AtomicBoolean(),
                    new AtomicLong(), // bumped at the kill and at the restart
                    new AtomicLongArray(STREAMS),
                    new AtomicLongArray(STREAMS),
                    new AtomicLong(),
                    new AtomicLong(),
                    new AtomicLong(),
                    new AtomicLong());
        }

        String user(int index) {
            return run + "-" + index;
        }
    }

    /** One client holding a stream open at a time: reserve, stream 100-300 ms, commit what was used. */
    private static void stream(RateLimiter limiter, Tally tally, int index, List<SharedBudget> shared)
            throws InterruptedException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        boolean paying = !shared.isEmpty();
        Amounts estimate = Amounts.tokens(ESTIMATE_TOKENS);
        if (paying) {
            estimate = estimate.and(Window.Unit.USD_MICROS, ESTIMATE_MICROS);
        }
        while (!tally.stop().get()) {
            long before = tally.epoch().get();
            Reservation reservation;
            try {
                reservation = limiter.reserve(tally.user(index), TIER, estimate, shared, Concurrency.of(5));
            } catch (RateLimiterUnavailableException e) {
                tally.refused().incrementAndGet(); // a budget in money is not decided without the store
                Thread.sleep(20);
                continue;
            }
            Decision decision = reservation.decision();
            if (!decision.allowed()) {
                tally.refused().incrementAndGet();
                Thread.sleep(20);
                continue;
            }
            Thread.sleep(random.nextInt(100, 300));
            long used = random.nextLong(5, 60);
            long micros = used * 3;
            Amounts actual = Amounts.tokens(used);
            if (paying) {
                actual = actual.and(Window.Unit.USD_MICROS, micros);
            }
            reservation.commit(actual);
            if (decision.degraded()) {
                tally.degraded().incrementAndGet();
                continue;
            }
            if (tally.epoch().get() != before) {
                tally.spanned().incrementAndGet();
            }
            tally.requests().incrementAndGet(index);
            tally.tokens().addAndGet(index, used);
            if (paying) {
                tally.spend().addAndGet(micros);
            }
        }
    }

    private static List<String> mismatches(RateLimiter limiter, Tally tally, SharedBudget team) {
        List<String> mismatches = new ArrayList<>();
        for (int s = 0; s < STREAMS; s++) {
            String user = tally.user(s);
            List<Decision.Usage> usage = limiter.usage(user, TIER);
            check(
                    mismatches,
                    user + " requests",
                    used(usage, "minute"),
                    tally.requests().get(s));
            check(
                    mismatches,
                    user + " tokens",
                    used(usage, "tokens-minute"),
                    tally.tokens().get(s));
            check(mismatches, user + " leases", limiter.inFlight(user), 0);
        }
        check(
                mismatches,
                "team spend",
                used(limiter.usage(team), "spend-month"),
                tally.spend().get());
        return mismatches;
    }

    private static void check(List<String> mismatches, String what, long inRedis, long real) {
        if (inRedis != real) {
            mismatches.add(what + ": Redis " + inRedis + ", real " + real);
        }
    }

    private static long used(List<Decision.Usage> usage, String window) {
        return usage.stream()
                .filter(u -> u.window().name().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }
}
