package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 32's over-admission count ({@code --lease-edges}): four limiters share one budget on one store (one
 * in-memory store, or each limiter its own Lettuce connection to the private {@code redis-server}) and
 * one injected clock, moved in steps of 100 ms across six 10-second windows; within a step the clock
 * stands still and 16 threads (4 per limiter) race to reserve against a budget far smaller than the
 * demand. Five trials per store and budget, each with other estimates and its clock starting at another
 * offset from the windows' edges; the rows sum the trials and keep their largest span. Every commit is
 * recorded at its reservation's time; the figure is the most admitted in any window-length span,
 * requests and tokens, against the limit.
 *
 * <p>Each reservation estimates 100 to 999 tokens; a third are committed as estimated, a third at half
 * the estimate (a refund) and a third cancelled (not admitted: everything goes back). One limiter dies at
 * 25 s (stops without returning its lease), another returns its leases at 40 s and goes on.
 */
final class LeaseEdges {

    static final Duration LENGTH = Duration.ofSeconds(10);
    static final Window REQUESTS = Window.of(40, LENGTH);
    static final Window TOKENS = Window.tokens(20_000, LENGTH);
    static final SharedBudget BUDGET = new SharedBudget("edge-cap", List.of(REQUESTS, TOKENS));
    static final Tier ROOMY = Tier.of("roomy", Window.of(100_000, Duration.ofMinutes(1)));
    static final int LIMITERS = 4;
    static final int THREADS_PER_LIMITER = 4;
    static final int TRIALS = 5;
    static final int STEPS = 600;
    static final long STEP_MILLIS = 100;
    static final int DIES_AT_STEP = 250;
    static final int RETURNS_AT_STEP = 400;

    private LeaseEdges() {}

    record Row(
            String store,
            boolean leased,
            long admitted,
            long rejected,
            long mostRequests,
            long mostTokens,
            long budgetCalls,
            long leasesTaken,
            long leasesRefused) {}

    /** Runs the in-memory store and, when {@code redis} is given, the Redis store, leased and not; prints the table. */
    static List<Row> run(RedisServer redis) throws Exception {
        List<Row> rows = new ArrayList<>();
        for (boolean leased : List.of(true, false)) {
            List<Row> memory = new ArrayList<>();
            List<Row> remote = new ArrayList<>();
            for (int trial = 0; trial < TRIALS; trial++) {
                trial(redis, leased, trial, memory, remote);
            }
            rows.add(progress(merge(memory)));
            if (!remote.isEmpty()) {
                rows.add(progress(merge(remote)));
            }
        }
        System.out.println();
        System.out.println(table(rows));
        return rows;
    }

    private static Row merge(List<Row> trials) {
        Row first = trials.get(0);
        return new Row(
                first.store(),
                first.leased(),
                trials.stream().mapToLong(Row::admitted).sum(),
                trials.stream().mapToLong(Row::rejected).sum(),
                trials.stream().mapToLong(Row::mostRequests).max().orElseThrow(),
                trials.stream().mapToLong(Row::mostTokens).max().orElseThrow(),
                trials.stream().mapToLong(Row::budgetCalls).sum(),
                trials.stream().mapToLong(Row::leasesTaken).sum(),
                trials.stream().mapToLong(Row::leasesRefused).sum());
    }

    private static void trial(RedisServer redis, boolean leased, int trial, List<Row> memory, List<Row> remote)
            throws Exception {
        {
            long offset = trial * 3_337L;
            BenchClock clock = new BenchClock(System.currentTimeMillis() + offset);
            InMemoryWindowStore shared = InMemoryWindowStore.create(clock);
            memory.add(once("in-memory", leased, clock, () -> shared, () -> {}, trial));
            if (redis != null) {
                redis.call("FLUSHALL");
                BenchClock redisClock = new BenchClock(System.currentTimeMillis() + offset);
                List<AutoCloseable> open = new ArrayList<>();
                remote.add(once(
                        "Redis (Lettuce, a connection per limiter)",
                        leased,
                        redisClock,
                        () -> {
                            RedisClient client = RedisClient.create(redis.uri());
                            CloseableWindowStore store = LettuceWindowStore.create(client);
                            open.add(store);
                            open.add(client::shutdown);
                            return store;
                        },
                        () -> {
                            for (AutoCloseable closeable : open) {
                                try {
                                    closeable.close();
                                } catch (Exception e) {
                                    // best effort
                                }
                            }
                        },
                        trial));
            }
        }
    }

    private static Row progress(Row row) {
        BenchmarkRunner.log("  " + row);
        return row;
    }

    static String table(List<Row> rows) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "Budget %d requests and %,d tokens per %d s; %d limiters x %d threads; %d trials of %d steps of %d ms"
                        + " (%d s)%n%n",
                REQUESTS.limit(),
                TOKENS.limit(),
                LENGTH.toSeconds(),
                LIMITERS,
                THREADS_PER_LIMITER,
                TRIALS,
                STEPS,
                STEP_MILLIS,
                STEPS * STEP_MILLIS / 1_000));
        out.append("| Store | Budget | Admitted (committed) | Rejected | Most requests in any 10 s span (limit "
                + REQUESTS.limit() + ") | Most tokens in any 10 s span (limit "
                + String.format(Locale.ROOT, "%,d", TOKENS.limit())
                + ") | Excess over the limit | Store calls on the budget's keys | Leases taken / refused |\n");
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row row : rows) {
            long excess = Math.max(0, row.mostRequests() - REQUESTS.limit());
            long tokenExcess = Math.max(0, row.mostTokens() - TOKENS.limit());
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %,d | %,d | %d | %,d | **%d** requests, **%d** tokens | %,d | %s |%n",
                    row.store(),
                    row.leased() ? "leased, `Leasing.auto()`" : "not leased",
                    row.admitted(),
                    row.rejected(),
                    row.mostRequests(),
                    row.mostTokens(),
                    excess,
                    tokenExcess,
                    row.budgetCalls(),
                    row.leased() ? row.leasesTaken() + " / " + row.leasesRefused() : "–"));
        }
        return out.toString();
    }

    interface StoreSupplier {
        WindowStore get();
    }

    private static Row once(
            String storeName, boolean leased, BenchClock clock, StoreSupplier stores, Runnable close, int trial)
            throws InterruptedException {
        SharedBudget budget = leased ? BUDGET.leased(Leasing.auto()) : BUDGET;
        List<CountingStore> counting = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int l = 0; l < LIMITERS; l++) {
            CountingStore store = new CountingStore(stores.get());
            counting.add(store);
            limiters.add(SlidingWindowRateLimiter.builder(store)
                    .clock(clock)
                    .failOpen(false)
                    .build());
        }
        List<long[]> admitted = new ArrayList<>(); // time, tokens
        AtomicLong rejected = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int threads = LIMITERS * THREADS_PER_LIMITER;
        CyclicBarrier step = new CyclicBarrier(threads, () -> clock.advance(STEP_MILLIS));
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int limiterIndex = t % LIMITERS;
            int threadIndex = t;
            RateLimiter limiter = limiters.get(limiterIndex);
            Thread worker = new Thread(
                    () -> {
                        try {
                            for (int s = 0; s < STEPS; s++) {
                                boolean dead = limiterIndex == LIMITERS - 1 && s >= DIES_AT_STEP;
                                if (limiterIndex == LIMITERS - 2 && s == RETURNS_AT_STEP && threadIndex < LIMITERS) {
                                    limiter.returnLeases();
                                }
                                if (!dead) {
                                    long at = clock.millis();
                                    long estimate = 100 + (s * 37L + threadIndex * 101L + trial * 211L) % 900;
                                    Reservation reservation = limiter.reserve(
                                            "edge-user-" + threadIndex,
                                            ROOMY,
                                            Amounts.tokens(estimate),
                                            List.of(budget));
                                    if (reservation.decision().allowed()) {
                                        int kind = (s + threadIndex + trial) % 3;
                                        if (kind == 2) {
                                            reservation
                                                    .cancel()
                                                    .toCompletableFuture()
                                                    .join();
                                        } else {
                                            long actual = kind == 0 ? estimate : estimate / 2;
                                            reservation
                                                    .commit(Amounts.tokens(actual))
                                                    .toCompletableFuture()
                                                    .join();
                                            synchronized (admitted) {
                                                admitted.add(new long[] {at, actual});
                                            }
                                        }
                                    } else {
                                        rejected.incrementAndGet();
                                    }
                                }
                                step.await();
                            }
                        } catch (InterruptedException | BrokenBarrierException e) {
                            failure.compareAndSet(null, e);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                            step.reset();
                        }
                    },
                    "edge-" + t);
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        close.run();
        if (failure.get() != null) {
            throw new IllegalStateException("edge run failed", failure.get());
        }
        admitted.sort(Comparator.comparingLong(a -> a[0]));
        long most = 0;
        long mostTokens = 0;
        int j = 0;
        long count = 0;
        long tokens = 0;
        // spans [t, t + length) starting at each admission: the most any span holds starts at one
        for (int i = 0; i < admitted.size(); i++) {
            long start = admitted.get(i)[0];
            while (j < admitted.size() && admitted.get(j)[0] < start + LENGTH.toMillis()) {
                count++;
                tokens += admitted.get(j)[1];
                j++;
            }
            most = Math.max(most, count);
            mostTokens = Math.max(mostTokens, tokens);
            count--;
            tokens -= admitted.get(i)[1];
        }
        long budgetCalls = 0;
        long taken = 0;
        long refused = 0;
        for (CountingStore store : counting) {
            budgetCalls += store.budgetCalls();
            taken += store.leasesTaken.get();
            refused += store.leasesRefused.get();
        }
        return new Row(
                storeName, leased, admitted.size(), rejected.get(), most, mostTokens, budgetCalls, taken, refused);
    }
}
