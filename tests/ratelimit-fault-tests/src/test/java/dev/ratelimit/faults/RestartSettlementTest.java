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
                    .meterRegistry(registry)
                    .build();
            String run = UUID.randomUUID().toString();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLongArray requests = new AtomicLongArray(STREAMS);
            AtomicLongArray tokens = new AtomicLongArray(STREAMS);
            AtomicLong spend = new AtomicLong();
            AtomicLong degraded = new AtomicLong();
            AtomicLong refused = new AtomicLong();
            AtomicLong spanned = new AtomicLong();
            AtomicLong epoch = new AtomicLong(); // bumped at the kill and at the restart
            List<Thread> streams = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int s = 0; s < STREAMS; s++) {
                int user = s;
                boolean paying = s >= STREAMS / 2;
                Thread thread = new Thread(
                        () -> {
                            try {
                                stream(
                                        limiter,
                                        run + "-" + user,
                                        paying ? List.of(team) : List.of(),
                                        paying,
                                        stop,
                                        user,
                                        requests,
                                        tokens,
                                        spend,
                                        degraded,
                                        refused,
                                        spanned,
                                        epoch);
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
            epoch.incrementAndGet();
            Thread.sleep(1_000);
            redis.startAgain();
            epoch.incrementAndGet();
            Thread.sleep(2_000);
            stop.set(true);
            for (Thread thread : streams) {
                thread.join(30_000);
            }
            long lastResponse = System.nanoTime();
            assertThat(failures).isEmpty();

            long deadline = lastResponse + SETTLED_WITHIN.toNanos();
            List<String> mismatches = mismatches(limiter, run, team, requests, tokens, spend);
            while (!mismatches.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(20);
                mismatches = mismatches(limiter, run, team, requests, tokens, spend);
            }
            long settledMillis =
                    Duration.ofNanos(System.nanoTime() - lastResponse).toMillis();
            long admitted = 0;
            for (int s = 0; s < STREAMS; s++) {
                admitted += requests.get(s);
            }
            System.out.printf(
                    "%s restart: %d calls decided by the store, %d degraded, %d refused, %d streams spanned the"
                            + " kill; Redis matched the real usage %d ms after the last response; %s%n",
                    driver,
                    admitted,
                    degraded.get(),
                    refused.get(),
                    spanned.get(),
                    settledMillis,
                    mismatches.isEmpty() ? "exact" : "mismatches " + mismatches);
            assertThat(mismatches)
                    .as(
                            "every entry and lease in Redis matches the real usage within %d ms of the last response",
                            SETTLED_WITHIN.toMillis())
                    .isEmpty();
            assertThat(spanned.get()).as("streams in flight across the kill").isPositive();
            assertThat(registry.find("ratelimit.settle.failures").counters())
                    .as("no settlement given up")
                    .isEmpty();
        }
    }

    /** One client holding a stream open at a time: reserve, stream 100-300 ms, commit what was used. */
    private static void stream(
            RateLimiter limiter,
            String user,
            List<SharedBudget> shared,
            boolean paying,
            AtomicBoolean stop,
            int index,
            AtomicLongArray requests,
            AtomicLongArray tokens,
            AtomicLong spend,
            AtomicLong degraded,
            AtomicLong refused,
            AtomicLong spanned,
            AtomicLong epoch)
            throws InterruptedException {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Amounts estimate = Amounts.tokens(ESTIMATE_TOKENS);
        if (paying) {
            estimate = estimate.and(Window.Unit.USD_MICROS, ESTIMATE_MICROS);
        }
        while (!stop.get()) {
            long before = epoch.get();
            Reservation reservation;
            try {
                reservation = limiter.reserve(user, TIER, estimate, shared, Concurrency.of(5));
            } catch (RateLimiterUnavailableException e) {
                refused.incrementAndGet(); // a budget in money is not decided without the store
                Thread.sleep(20);
                continue;
            }
            Decision decision = reservation.decision();
            if (!decision.allowed()) {
                refused.incrementAndGet();
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
                degraded.incrementAndGet();
                continue;
            }
            if (epoch.get() != before) {
                spanned.incrementAndGet();
            }
            requests.incrementAndGet(index);
            tokens.addAndGet(index, used);
            if (paying) {
                spend.addAndGet(micros);
            }
        }
    }

    private static List<String> mismatches(
            RateLimiter limiter,
            String run,
            SharedBudget team,
            AtomicLongArray requests,
            AtomicLongArray tokens,
            AtomicLong spend) {
        List<String> mismatches = new ArrayList<>();
        for (int s = 0; s < STREAMS; s++) {
            String user = run + "-" + s;
            List<Decision.Usage> usage = limiter.usage(user, TIER);
            check(mismatches, user + " requests", used(usage, "minute"), requests.get(s));
            check(mismatches, user + " tokens", used(usage, "tokens-minute"), tokens.get(s));
            check(mismatches, user + " leases", limiter.inFlight(user), 0);
        }
        check(mismatches, "team spend", used(limiter.usage(team), "spend-month"), spend.get());
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
