package dev.ratelimit.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.testkit.MutableClock;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Leased shares of a shared budget ({@code Leasing.of(5)}, a cap of 60 requests a minute) on a real
 * redis-server through the Lettuce store, three limiters each on a connection of its own and one
 * injected clock: the cap is never over-admitted and, once every lease is back, Redis counts exactly
 * what was admitted, with Redis paused ({@code CLIENT PAUSE WRITE}) while the leases renew, killed
 * and restarted with leases outstanding, and on a cold start under a race. No test warms anything
 * up: each starts its own server and its limiters' first calls load the script.
 *
 * <p>Each test ends the same way: the clock moves past the leases' ends and the three limiters, in
 * turn, ask until each is refused; the minute then holds exactly the cap, which it could not if a
 * lease in doubt had been kept (the cap would be short) or a return applied twice, or a lease lost
 * and spent too (over).
 */
class LeaseFaultTest {

    private static final Instant T0 = Instant.parse("2026-09-01T10:00:00Z");
    private static final int CAP = 60;
    private static final Tier TENANT = Tier.of("tenant", Window.of(100_000, Duration.ofMinutes(1)));

    /** Three limiters, each on a connection of its own, on one clock; the cap named for the run. */
    private static final class Fleet implements AutoCloseable {
        final MutableClock clock = MutableClock.at(T0);
        final SharedBudget cap;
        final SharedBudget plain;
        final List<CloseableWindowStore> stores = new ArrayList<>();
        final List<RateLimiter> limiters = new ArrayList<>();
        final RateLimiter observer;
        int admitted;

        Fleet(RedisServer redis) {
            plain = SharedBudget.of(
                    "cap-" + UUID.randomUUID().toString().substring(0, 8), Window.of(CAP, Duration.ofMinutes(1)));
            cap = plain.leased(Leasing.of(5, Amounts.none()));
            for (int i = 0; i < 4; i++) {
                CloseableWindowStore store = Driver.LETTUCE.standalone(redis);
                stores.add(store);
                RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                        .clock(clock)
                        .failOpen(false)
                        .rejectionCache(false)
                        .build();
                limiters.add(limiter);
            }
            observer = limiters.remove(3); // reads the cap's usage; its failures do not trip the others' breakers
        }

        /** One request on limiter {@code i}: admitted, refused by a decision, or unavailable ({@code null}). */
        Boolean ask(int i) {
            try {
                Decision decision = limiters.get(i)
                        .reserve("tenant-" + i, TENANT, Amounts.none(), List.of(cap))
                        .decision();
                if (decision.allowed()) {
                    synchronized (this) {
                        admitted++;
                    }
                }
                return decision.allowed();
            } catch (RateLimiterUnavailableException e) {
                return null;
            }
        }

        /**
         * The cap's count in Redis, leases included, asked again while the store does not answer (a
         * pause, a restart, a connection being opened again), failing after 30 s.
         */
        long used() throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try {
                    return observer.usage(plain).get(0).used();
                } catch (RateLimiterUnavailableException e) {
                    assertThat(System.nanoTime())
                            .as("the store answers within 30 s: " + e)
                            .isLessThan(deadline);
                    Thread.sleep(20);
                }
            }
        }

        /**
         * The limiters in turn until each is refused by a decision (one unavailable, its breaker open
         * after the fault, asks again); then every lease returned.
         */
        void drain() {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            boolean[] refused = new boolean[limiters.size()];
            int open = limiters.size();
            while (open > 0) {
                assertThat(System.nanoTime()).as("drained within 60 s").isLessThan(deadline);
                for (int i = 0; i < limiters.size(); i++) {
                    if (!refused[i] && Boolean.FALSE.equals(ask(i))) {
                        refused[i] = true;
                        open--;
                    }
                }
            }
            limiters.forEach(RateLimiter::returnLeases);
        }

        /** {@link #drain}, then checks that the minute holds exactly the cap, admitted and counted. */
        void drainToTheCap(String fault) throws InterruptedException {
            drain();
            System.out.printf("lease fault (%s): admitted %d of a cap of %d%n", fault, admitted, CAP);
            assertThat(admitted).as("admitted in the minute").isEqualTo(CAP);
            assertThat(used()).as("Redis's count once every lease is back").isEqualTo(CAP);
        }

        @Override
        public void close() {
            stores.forEach(CloseableWindowStore::close);
        }
    }

    @Test
    @DisplayName("CLIENT PAUSE WRITE for 3 s while three limiters renew their leases: nothing admitted meanwhile, the"
            + " leases in doubt given back after it, exactly the cap of 60 in the minute")
    void pauseWhileLeasesRenew() throws Exception {
        try (RedisServer redis = RedisServer.start();
                Fleet fleet = new Fleet(redis)) {
            for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 3; i++) {
                    assertThat(fleet.ask(i))
                            .as("cold start, round %d, limiter %d", round, i)
                            .isTrue();
                }
            }
            assertThat(fleet.used()).as("three leases of 5, all used").isEqualTo(15);

            redis.call("CLIENT", "PAUSE", "3000", "WRITE");
            long resumes = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            // each limiter's next request renews its lease (the return of the one used up and the next
            // take, one call): it times out, in doubt; so does the direct reservation after it
            List<Boolean> during = race(3, fleet::ask);
            assertThat(during).as("while paused the store decides nothing").containsOnlyNulls();

            // the paused calls run when the pause ends, then the give-backs queued behind them
            awaitTrue("the pause over, Redis counts the 15 admitted, the leases in doubt given back", () -> {
                if (System.nanoTime() < resumes || fleet.used() != 15) {
                    return false;
                }
                return fleet.used() == 15; // and still: no call of the pause was left to run
            });
            fleet.clock.advance(Duration.ofSeconds(1));
            fleet.drainToTheCap("CLIENT PAUSE WRITE 3 s during renewals");
        }
    }

    @Test
    @DisplayName("kill -9 with three leases outstanding, restart from the append-only file: nothing admitted while"
            + " down, leases taken again after, every return applied once, exactly the cap of 60 in the minute")
    void killAndRestartMidLease() throws Exception {
        try (RedisServer redis = RedisServer.start(List.of("--appendonly", "yes", "--appendfsync", "always"));
                Fleet fleet = new Fleet(redis)) {
            for (int round = 0; round < 5; round++) {
                assertThat(fleet.ask(0)).as("limiter 0, request %d", round).isTrue();
                if (round < 3) {
                    assertThat(fleet.ask(1)).isTrue();
                    assertThat(fleet.ask(2)).isTrue();
                }
            }
            assertThat(fleet.used()).as("three leases of 5; 11 used").isEqualTo(15);

            redis.kill();
            // limiter 0 must renew (its return fails, made again later); 1 and 2 spend from their
            // slices, but their tenants' own windows need the store: nothing is admitted
            List<Boolean> down = race(3, fleet::ask);
            assertThat(down).as("while Redis is down").containsOnlyNulls();
            assertThat(fleet.admitted).isEqualTo(11);
            redis.startAgain();

            awaitTrue("the leases outstanding at the kill are back from the file", () -> fleet.used() == 15);
            fleet.clock.advance(Duration.ofSeconds(1));
            awaitTrue("limiter 0 leases again", () -> Boolean.TRUE.equals(fleet.ask(0)));
            assertThat(fleet.limiters.get(0).leases())
                    .as("limiter 0's new lease")
                    .hasSize(1);
            fleet.drainToTheCap("kill -9 and restart with 3 leases outstanding");
        }
    }

    @Test
    @DisplayName("a cold redis-server, three limiters, 150 requests released at once: at most the cap, exactly the"
            + " cap once drained, Redis counting exactly what was admitted")
    void coldStartUnderARace() throws Exception {
        try (RedisServer redis = RedisServer.start();
                Fleet fleet = new Fleet(redis)) {
            List<Boolean> raced = race(150, thread -> fleet.ask(thread % 3));
            long admitted = raced.stream().filter(Boolean.TRUE::equals).count();
            long unavailable = raced.stream().filter(answer -> answer == null).count();
            // (a call the cold, loaded machine does not answer within 500 ms is refused, not admitted)
            assertThat(admitted).as("admitted in the race").isBetween(1L, (long) CAP);
            fleet.drainToTheCap(
                    "cold start, 150 racing: " + admitted + " admitted in the race, " + unavailable + " unavailable");
        }
    }

    /** What {@link #awaitTrue} waits for. */
    private interface Condition {
        boolean holds() throws InterruptedException;
    }

    /** {@code threads} calls released at once; their answers, in thread order. */
    private static List<Boolean> race(int threads, java.util.function.IntFunction<Boolean> call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> answers = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int thread = i;
                Callable<Boolean> task = () -> {
                    ready.countDown();
                    go.await();
                    return call.apply(thread);
                };
                answers.add(pool.submit(task));
            }
            assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
            go.countDown();
            List<Boolean> result = new ArrayList<>();
            for (Future<Boolean> answer : answers) {
                result.add(answer.get(60, TimeUnit.SECONDS));
            }
            return result;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Waits for an event of the store (a pause ending, a restart), failing after 30 s. */
    private static void awaitTrue(String what, Condition condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.holds()) {
            assertThat(System.nanoTime()).as(what + ", within 30 s").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
