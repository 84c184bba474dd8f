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
import dev.ratelimit.testsupport.redis.RespClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Money under faults, for both drivers on a private redis-server: no settlement is lost while Redis
 * is paused, and what Redis holds afterwards is exactly what was really spent.
 */
class SettlementFaultTest {

    private static final Window.Unit USD = Window.Unit.USD_MICROS;
    private static final int CALLS = 60;
    private static final long ESTIMATE_MICROS = 1_000;
    private static final long CAP_MICROS = 30_000;

    /** A team's monthly cap of $0.03 (30 days at 1-hour precision, as the gateway keeps money) and its tokens. */
    private static final SharedBudget TEAM = SharedBudget.of(
            "team-" + UUID.randomUUID(),
            Window.of("spend-month", CAP_MICROS, Duration.ofDays(30), USD).withPrecision(Duration.ofHours(1)),
            Window.tokens("tokens-hour", 1_000_000, Duration.ofHours(1)));

    private static final Tier TENANT = Tier.of(
            "tenant",
            Window.of("minute", 1_000, Duration.ofMinutes(1), Window.Unit.REQUESTS),
            Window.of("spend-day", 1_000_000, Duration.ofDays(1), USD));

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName(
            "CLIENT PAUSE 1.5 s while a 60-call race on a money cap settles: none lost, Redis holds the real spend")
    void pausedRedisLosesNoSettlement(Driver driver) throws Exception {
        try (RedisServer redis = RedisServer.start();
                CloseableWindowStore store = driver.standalone(redis)) {
            MeterRegistry registry = new SimpleMeterRegistry();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .failOpen(false)
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .build();
            String user = "tenant-" + UUID.randomUUID();
            Amounts estimate = Amounts.tokens(100).and(USD, ESTIMATE_MICROS);

            List<Reservation> admitted = race(CALLS, i -> limiter.reserve(user, TENANT, estimate, List.of(TEAM)));
            admitted.removeIf(reservation -> !reservation.decision().allowed());
            assertThat(admitted)
                    .as("60 calls of $0.001 at once against a $0.03 cap")
                    .hasSize((int) (CAP_MICROS / ESTIMATE_MICROS));

            try (RespClient raw = redis.connect()) {
                raw.call("CLIENT", "PAUSE", "1500", "ALL");
            }
            long paused = System.nanoTime();
            // every call settles below its estimate (a refund), the real cost of call i being 100 + i µ$
            long realMicros = 0;
            long realTokens = 0;
            List<Amounts> actuals = new ArrayList<>();
            for (int i = 0; i < admitted.size(); i++) {
                Amounts actual = Amounts.tokens(10 + i).and(USD, 100 + i);
                actuals.add(actual);
                realMicros += 100 + i;
                realTokens += 10 + i;
            }
            race(admitted.size(), i -> {
                admitted.get(i).commit(actuals.get(i)).toCompletableFuture().join();
                return admitted.get(i);
            });
            assertThat(System.nanoTime() - paused)
                    .as("the commits were made while Redis was paused")
                    .isLessThan(TimeUnit.MILLISECONDS.toNanos(1_500));
            assertThat(registry.find("ratelimit.settle.deferred").counters())
                    .as("the paused store did not take the settlements at once")
                    .isNotEmpty();

            assertThat(limiter.awaitSettlements(Duration.ofSeconds(20)))
                    .as("every settlement applied once Redis answers again")
                    .isTrue();
            assertThat(registry.find("ratelimit.settle.failures").counters())
                    .as("no settlement given up")
                    .isEmpty();

            List<Decision.Usage> team = limiter.usage(TEAM);
            assertThat(used(team, "spend-month"))
                    .as("the team's month in Redis: the real spend")
                    .isEqualTo(realMicros);
            assertThat(used(team, "tokens-hour"))
                    .as("the team's tokens in Redis: the real tokens")
                    .isEqualTo(realTokens);
            List<Decision.Usage> tenant = limiter.usage(user, TENANT);
            assertThat(used(tenant, "minute")).as("the tenant's requests").isEqualTo(admitted.size());
            assertThat(used(tenant, "spend-day"))
                    .as("the tenant's day in Redis: the real spend")
                    .isEqualTo(realMicros);
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("reservations whose reply is lost while Redis is paused leave nothing behind once it answers")
    void pausedReservationsLeaveNothing(Driver driver) throws Exception {
        try (RedisServer redis = RedisServer.start();
                CloseableWindowStore store = driver.standalone(redis)) {
            MeterRegistry registry = new SimpleMeterRegistry();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .build();
            String user = "tenant-" + UUID.randomUUID();
            Amounts estimate = Amounts.tokens(100).and(USD, ESTIMATE_MICROS);
            assertThat(limiter.reserve(user, TENANT, estimate, List.of(TEAM))
                            .commit(Amounts.tokens(10).and(USD, 100))
                            .toCompletableFuture()
                            .join())
                    .isNull();
            try (RespClient raw = redis.connect()) {
                raw.call("CLIENT", "PAUSE", "1500", "ALL");
            }
            List<Boolean> answered = race(10, i -> {
                try {
                    return limiter.reserve(user, TENANT, estimate, List.of(TEAM), Concurrency.of(100))
                            .decision()
                            .allowed();
                } catch (RateLimiterUnavailableException e) {
                    return false; // money fails closed: refused while the store cannot decide
                }
            });
            assertThat(answered).as("nothing admitted while paused").containsOnly(false);
            assertThat(limiter.awaitSettlements(Duration.ofSeconds(20))).isTrue();
            Thread.sleep(1_600); // the pause over, whatever Redis ran late has run
            assertThat(limiter.awaitSettlements(Duration.ofSeconds(20))).isTrue();
            List<Decision.Usage> team = limiter.usage(TEAM);
            List<Decision.Usage> tenant = limiter.usage(user, TENANT);
            System.out.printf(
                    "%s paused reservations: team %d µ$, tokens %d, tenant %d requests, %d µ$, %d leases (real: 100 µ$,"
                            + " 10 tokens, 1 request, 100 µ$, 0 leases)%n",
                    driver,
                    used(team, "spend-month"),
                    used(team, "tokens-hour"),
                    used(tenant, "minute"),
                    used(tenant, "spend-day"),
                    limiter.inFlight(user));
            assertThat(used(team, "spend-month"))
                    .as("the team's month (1-hour precision): nothing of the refused reservations")
                    .isEqualTo(100);
            assertThat(used(team, "tokens-hour")).as("the team's tokens").isEqualTo(10);
            assertThat(used(tenant, "minute")).as("the tenant's requests").isEqualTo(1);
            assertThat(used(tenant, "spend-day")).as("the tenant's day").isEqualTo(100);
            assertThat(limiter.inFlight(user)).as("no lease left").isZero();
        }
    }

    static long used(List<Decision.Usage> usage, String window) {
        return usage.stream()
                .filter(u -> u.window().name().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    /** Runs {@code calls} tasks released at once and returns their results in task order. */
    static <T> List<T> race(int calls, Task<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(calls);
        try {
            CountDownLatch ready = new CountDownLatch(calls);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < calls; i++) {
                int index = i;
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return task.run(index);
                }));
            }
            ready.await();
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) {
                results.add(future.get(60, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    interface Task<T> {
        T run(int index) throws Exception;
    }
}
