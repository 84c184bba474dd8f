package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.FailurePolicy;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each window's failure policy on a real redis-server that stops, three limiter instances (three
 * stores, as three app servers would have), both drivers: a 60-call race per policy, released at
 * once across the instances.
 */
class FailurePolicyFaultTest {

    private static final int INSTANCES = 3;
    private static final int CALLS = 60;
    private static final long CAP_MICROS = 30_000;
    private static final long COST_MICROS = 1_000;

    private static final Window MINUTE = Window.of("minute", 10_000, Duration.ofMinutes(1), Window.Unit.REQUESTS);

    @ParameterizedTest
    @EnumSource(Driver.class)
    @DisplayName("store down: local admits at most a third each and the cap in all, closed none, open all")
    void policiesWhileTheStoreIsDown(Driver driver) throws Exception {
        Window spend = Window.of("spend-month", CAP_MICROS, Duration.ofDays(30), Window.Unit.USD_MICROS)
                .withPrecision(Duration.ofHours(1));
        SharedBudget localTeam =
                SharedBudget.of("team-" + UUID.randomUUID(), spend.withFailurePolicy(FailurePolicy.LOCAL));
        SharedBudget closedTeam = SharedBudget.of("team-" + UUID.randomUUID(), spend);
        Tier tier = Tier.of("tenant", MINUTE);
        Amounts cost = Amounts.of(Window.Unit.USD_MICROS, COST_MICROS);
        try (RedisServer redis = RedisServer.start()) {
            List<CloseableWindowStore> stores = new ArrayList<>();
            List<RateLimiter> limiters = new ArrayList<>();
            try {
                for (int i = 0; i < INSTANCES; i++) {
                    CloseableWindowStore store = driver.standalone(redis);
                    stores.add(store);
                    limiters.add(SlidingWindowRateLimiter.builder(store)
                            .name("instance-" + i)
                            .expectedInstances(INSTANCES)
                            .build());
                }
                for (RateLimiter limiter : limiters) {
                    assertThat(limiter.reserve("warm-" + UUID.randomUUID(), tier, cost, List.of(closedTeam))
                                    .decision()
                                    .allowed())
                            .as("decided by the store while it runs")
                            .isTrue();
                }
                redis.stop();

                AtomicIntegerArray local = new AtomicIntegerArray(INSTANCES);
                race(i -> {
                    Decision decision = limiters.get(i % INSTANCES)
                            .reserve("user-" + i, tier, cost, List.of(localTeam))
                            .decision();
                    if (decision.allowed()) {
                        assertThat(decision.unchecked())
                                .as("the request window failed open")
                                .containsExactly(MINUTE);
                        local.incrementAndGet(i % INSTANCES);
                    } else {
                        assertThat(decision.window().name()).isEqualTo("spend-month");
                    }
                });
                long share = CAP_MICROS / INSTANCES / COST_MICROS;
                int total = 0;
                for (int i = 0; i < INSTANCES; i++) {
                    assertThat((long) local.get(i))
                            .as("instance %d admits its share", i)
                            .isEqualTo(share);
                    total += local.get(i);
                }
                assertThat((long) total * COST_MICROS)
                        .as("the three instances together, never more than the cap")
                        .isLessThanOrEqualTo(CAP_MICROS);

                AtomicIntegerArray closed = new AtomicIntegerArray(2);
                race(i -> {
                    try {
                        limiters.get(i % INSTANCES).reserve("user-" + i, tier, cost, List.of(closedTeam));
                        closed.incrementAndGet(0);
                    } catch (RateLimiterUnavailableException e) {
                        closed.incrementAndGet(1);
                    }
                });
                assertThat(closed.get(0))
                        .as("a budget in money that fails closed admits nothing")
                        .isZero();
                assertThat(closed.get(1)).isEqualTo(CALLS);

                AtomicIntegerArray open = new AtomicIntegerArray(1);
                race(i -> {
                    Decision decision = limiters.get(i % INSTANCES).check("user-" + i, tier);
                    if (decision.allowed() && decision.degraded()) {
                        open.incrementAndGet(0);
                    }
                });
                assertThat(open.get(0))
                        .as("a request window that fails open keeps serving")
                        .isEqualTo(CALLS);
                System.out.printf(
                        "%s failure policies, store down: local admitted %d (%d per instance of %d), closed 0 of %d,"
                                + " open %d of %d%n",
                        driver, total, share, INSTANCES, CALLS, open.get(0), CALLS);
            } finally {
                for (CloseableWindowStore store : stores) {
                    store.close();
                }
            }
        }
    }

    /** Runs {@code CALLS} tasks released at once. */
    private static void race(Task task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CALLS);
        try {
            CountDownLatch ready = new CountDownLatch(CALLS);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < CALLS; i++) {
                int index = i;
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    task.run(index);
                    return null;
                }));
            }
            ready.await();
            go.countDown();
            for (Future<?> future : futures) {
                future.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface Task {
        void run(int index) throws Exception;
    }
}
