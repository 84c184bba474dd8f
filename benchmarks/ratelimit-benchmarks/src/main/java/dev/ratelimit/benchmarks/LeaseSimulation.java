package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Issue 32's simulation ({@code --lease-simulation SECONDS}): N instances, each the real limiter ({@link
 * SlidingWindowRateLimiter}, its {@code BudgetLeases}) over its own {@link CountingStore} in front of one
 * shared {@link InMemoryWindowStore}, on one injected clock that a single thread moves from request to
 * request: no Redis, no threads racing, deterministic for a seed.
 *
 * <p>Model: requests arrive as one Poisson process of the fleet's rate (exponential gaps, the clock at
 * millisecond resolution), each sent to an instance drawn by weight: 80 % of the instances share the
 * traffic evenly, the other 20 % ("thin") get a twentieth of an even share each. Each request is for one
 * of 10,000 tenants (uniform; a tenant's own windows never bind) and reserves 1 request and 500 to 1,499
 * tokens against one model cap (requests and tokens per minute, the tokens limit 2,000 × the requests
 * limit, so requests bind first); reservations are not settled (the estimate is what is used). Two caps:
 * one above the demand (nothing binds) and one at half of it (the cap binds, and the window's edge is
 * crossed). A warm-up of 10 s is left out of the rates.
 *
 * <p>Every second of simulated time it reads the cap's usage from the store (leases included) and what
 * the store counts for the requests admitted (a request admitted from a lease counts until that lease's
 * stamp plus the window, one reserved directly until its time plus the window): the difference is the
 * idle capacity, leased but unused, set against the bound, the leases outstanding (taken, not returned,
 * still in the window), read from the counting stores.
 */
final class LeaseSimulation {

    static final Duration MINUTE = Duration.ofMinutes(1);
    static final long START = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();
    static final int WARM_UP_SECONDS = 10;

    private LeaseSimulation() {}

    record Row(
            int instances,
            boolean leased,
            double fleetRate,
            long capPerMinute,
            int seconds,
            long requests,
            long admitted,
            double budgetCallsPerSecond,
            double budgetCallsPerThousand,
            double leasesPerSecond,
            double meanIdle,
            long maxIdle,
            double meanBound,
            long maxBound,
            double maxIdleOverBound,
            long mostInSpan,
            long mostInSpanAfterWarmUp,
            long tailExcess,
            double directPerSecond,
            double refusedPerSecond,
            double returnsPerSecond,
            double meanLeaseRequests,
            double meanLeaseTokens,
            double meanIdleTokens,
            long maxIdleTokens,
            double meanBoundTokens,
            long maxBoundTokens,
            long tokenLimit,
            double realSeconds) {}

    /** Runs both caps, not leased at N = 10 and leased at every N; prints the table. */
    static List<Row> run(int seconds, double fleetRate, int[] instances) {
        List<Row> rows = new ArrayList<>();
        long above = Math.round(fleetRate * 60 * 5 / 3); // demand is 60 % of the cap
        long binding = Math.round(fleetRate * 60 / 2); // demand is twice the cap
        for (long cap : new long[] {above, binding}) {
            rows.add(progress(once(instances[0], false, fleetRate, cap, seconds, 1)));
            for (int n : instances) {
                rows.add(progress(once(n, true, fleetRate, cap, seconds, 1)));
            }
        }
        System.out.println();
        System.out.println(table(rows));
        return rows;
    }

    private static Row progress(Row row) {
        BenchmarkRunner.log("  " + row);
        return row;
    }

    static String table(List<Row> rows) {
        StringBuilder out = new StringBuilder();
        Row first = rows.get(0);
        out.append(String.format(
                Locale.ROOT,
                "Fleet %,.0f requests/s for %d s (rates, idle and bound over the last %d s); cap per minute:"
                        + " requests as below, tokens 2,000x%n%n",
                first.fleetRate(),
                first.seconds(),
                first.seconds() - WARM_UP_SECONDS));
        out.append("| Cap (requests/min) | Instances | Leased | Per instance, busy / thin (requests/s) | Store calls on"
                + " the cap's keys/s | per 1,000 admitted | of which reservations/s | Leases/s (refused/s) | Mean"
                + " lease (requests, tokens) | Idle requests: mean / max | Bound (leases outstanding): mean / max"
                + " | Idle tokens: mean / max | Bound tokens: max | Admitted / requested | Most admitted in any 60 s"
                + " span / limit | Simulated in |\n");
        out.append("|---:|---:|---|---|---:|---:|---:|---|---|---|---|---|---|---:|---|---:|\n");
        for (Row row : rows) {
            double even = row.fleetRate() / (row.instances() * 0.8 + row.instances() * 0.2 / 20);
            out.append(String.format(
                    Locale.ROOT,
                    "| %,d | %,d | %s | %,.1f / %,.1f | %,.0f | %.1f | %,.0f | %s | %s | %s | %s | %s | %s | %,d / %,d | %,d / %,d"
                            + " (%.1f %%) | %.0f s |%n",
                    row.capPerMinute(),
                    row.instances(),
                    row.leased() ? "auto" : "no",
                    even,
                    even / 20,
                    row.budgetCallsPerSecond(),
                    row.budgetCallsPerThousand(),
                    row.directPerSecond(),
                    row.leased()
                            ? String.format(Locale.ROOT, "%,.1f (%,.1f)", row.leasesPerSecond(), row.refusedPerSecond())
                            : "–",
                    row.leased()
                            ? String.format(Locale.ROOT, "%,.0f, %,.0f", row.meanLeaseRequests(), row.meanLeaseTokens())
                            : "–",
                    row.leased() ? String.format(Locale.ROOT, "%,.0f / %,d", row.meanIdle(), row.maxIdle()) : "0",
                    row.leased() ? String.format(Locale.ROOT, "%,.0f / %,d", row.meanBound(), row.maxBound()) : "0",
                    row.leased()
                            ? String.format(
                                    Locale.ROOT,
                                    "%,.0f / %,d (%.1f %% of the limit)",
                                    row.meanIdleTokens(),
                                    row.maxIdleTokens(),
                                    100.0 * row.maxIdleTokens() / row.tokenLimit())
                            : "0",
                    row.leased() ? String.format(Locale.ROOT, "%,d", row.maxBoundTokens()) : "0",
                    row.admitted(),
                    row.requests(),
                    row.mostInSpan(),
                    row.capPerMinute(),
                    100.0 * row.mostInSpan() / row.capPerMinute(),
                    row.realSeconds()));
        }
        return out.toString();
    }

    static Row once(int n, boolean leased, double fleetRate, long capPerMinute, int seconds, long seed) {
        long startNanos = System.nanoTime();
        Window capRequests = Window.of(capPerMinute, MINUTE);
        Window capTokens = Window.tokens(capPerMinute * 2_000, MINUTE);
        SharedBudget plain = new SharedBudget("model:sim", List.of(capRequests, capTokens));
        List<dev.ratelimit.api.SharedBudget> budget = List.of(leased ? plain.leased(Leasing.auto()) : plain);
        Tier tenant = Tier.of("tenant", Window.of(1_000_000, MINUTE));
        BenchClock clock = new BenchClock(START);
        InMemoryWindowStore store = InMemoryWindowStore.create(clock);
        RateLimiter observer =
                SlidingWindowRateLimiter.builder(store).clock(clock).build();
        CountingStore[] counting = new CountingStore[n];
        RateLimiter[] limiters = new RateLimiter[n];
        double[] cumulative = new double[n];
        double total = 0;
        int busy = (int) Math.round(n * 0.8);
        for (int i = 0; i < n; i++) {
            counting[i] = new CountingStore(store);
            limiters[i] = SlidingWindowRateLimiter.builder(counting[i])
                    .clock(clock)
                    .failOpen(false)
                    .build();
            total += i < busy ? 1.0 : 1.0 / 20;
            cumulative[i] = total;
        }
        String[] users = new String[Workload.USERS];
        for (int u = 0; u < users.length; u++) {
            users[u] = "tenant-" + u;
        }
        SplittableRandom random = new SplittableRandom(seed);
        long length = MINUTE.toMillis();
        long end = START + seconds * 1_000L;
        long[] expiring = new long[(int) (seconds * 1_000L + length + 2_000)];
        long[] expiringTokens = new long[expiring.length];
        long admittedTokens = 0;
        long expiredTokens = 0;
        double idleTokensSum = 0;
        double boundTokensSum = 0;
        long maxIdleTokens = 0;
        long maxBoundTokens = 0;
        long[] admitTimes = new long[(int) Math.min(Integer.MAX_VALUE - 8, (long) (fleetRate * seconds * 1.2) + 1_000)];
        int admittedCount = 0;
        long expired = 0;
        int expiredUpTo = 0; // offsets below this are added to expired
        long requests = 0;
        long nextSample = START + 1_000;
        long warmEnd = START + WARM_UP_SECONDS * 1_000L;
        Totals atWarmEnd = Totals.of(counting);
        long admittedAtWarmEnd = -1;
        double idleSum = 0;
        double boundSum = 0;
        long maxIdle = 0;
        long maxBound = 0;
        double maxRatio = 0;
        int samples = 0;
        double t = START;
        while (true) {
            t += -Math.log(1.0 - random.nextDouble()) * 1_000.0 / fleetRate;
            long now = (long) t;
            // samples and the warm-up's end fall between requests, at their own times
            while (nextSample <= Math.min(now, end)) {
                clock.set(nextSample);
                while (expiredUpTo <= nextSample - START) {
                    expiredTokens += expiringTokens[expiredUpTo];
                    expired += expiring[expiredUpTo++];
                }
                if (nextSample == warmEnd) {
                    atWarmEnd = Totals.of(counting);
                    admittedAtWarmEnd = admittedCount;
                }
                if (leased) {
                    long[] used = used(observer, plain, capRequests, capTokens);
                    long counted = admittedCount - expired;
                    long idle = used[0] - counted;
                    long idleTokens = used[1] - (admittedTokens - expiredTokens);
                    long bound = 0;
                    long boundTokens = 0;
                    for (CountingStore c : counting) {
                        long[] outstanding = c.outstanding(nextSample, length);
                        bound += outstanding[0];
                        boundTokens += outstanding[1];
                    }
                    warnAbove("requests", idle, bound, nextSample);
                    warnAbove("tokens", idleTokens, boundTokens, nextSample);
                    if (nextSample > warmEnd) {
                        idleSum += idle;
                        boundSum += bound;
                        maxIdle = Math.max(maxIdle, idle);
                        maxBound = Math.max(maxBound, bound);
                        idleTokensSum += idleTokens;
                        boundTokensSum += boundTokens;
                        maxIdleTokens = Math.max(maxIdleTokens, idleTokens);
                        maxBoundTokens = Math.max(maxBoundTokens, boundTokens);
                        if (bound > 0) {
                            maxRatio = Math.max(maxRatio, idle / (double) bound);
                        }
                        samples++;
                    }
                }
                nextSample += 1_000;
            }
            if (now >= end) {
                break;
            }
            clock.set(now);
            double pick = random.nextDouble() * total;
            int instance = Arrays.binarySearch(cumulative, pick);
            if (instance < 0) {
                instance = -instance - 1;
            }
            instance = Math.min(instance, n - 1);
            CountingStore c = counting[instance];
            long directBefore = c.budgetReserves.get();
            requests++;
            long estimate = 500 + random.nextInt(1_000);
            Decision decision = limiters[instance]
                    .reserve(users[random.nextInt(users.length)], tenant, Amounts.tokens(estimate), budget)
                    .decision();
            if (decision.allowed()) {
                long countedUntil =
                        c.budgetReserves.get() != directBefore ? now + length : c.lastStampMillis() + length;
                expiring[(int) (countedUntil - START)]++;
                expiringTokens[(int) (countedUntil - START)] += estimate;
                admittedTokens += estimate;
                if (admittedCount == admitTimes.length) {
                    admitTimes = Arrays.copyOf(admitTimes, admitTimes.length * 2);
                }
                admitTimes[admittedCount++] = now;
            }
        }
        Totals measured = Totals.of(counting).minus(atWarmEnd);
        double measuredSeconds = seconds - WARM_UP_SECONDS;
        long most = 0;
        long mostAfterWarmUp = 0;
        int j = 0;
        for (int i = 0; i < admittedCount; i++) {
            while (j < admittedCount && admitTimes[j] < admitTimes[i] + length) {
                j++;
            }
            most = Math.max(most, j - i);
            if (admitTimes[i] >= warmEnd) {
                mostAfterWarmUp = Math.max(mostAfterWarmUp, j - i);
            }
        }
        return new Row(
                n,
                leased,
                fleetRate,
                capPerMinute,
                seconds,
                requests,
                admittedCount,
                measured.calls() / measuredSeconds,
                1_000.0 * measured.calls() / (admittedCount - admittedAtWarmEnd),
                measured.leases() / measuredSeconds,
                samples == 0 ? 0 : idleSum / samples,
                maxIdle,
                samples == 0 ? 0 : boundSum / samples,
                maxBound,
                maxRatio,
                most,
                mostAfterWarmUp,
                Math.max(0, most - capPerMinute),
                measured.direct() / measuredSeconds,
                measured.refused() / measuredSeconds,
                measured.returns() / measuredSeconds,
                measured.leases() == 0 ? 0 : measured.leasedRequests() / (double) measured.leases(),
                measured.leases() == 0 ? 0 : measured.leasedTokens() / (double) measured.leases(),
                samples == 0 ? 0 : idleTokensSum / samples,
                maxIdleTokens,
                samples == 0 ? 0 : boundTokensSum / samples,
                maxBoundTokens,
                capTokens.limit(),
                (System.nanoTime() - startNanos) / 1e9);
    }

    /** What the counting stores of all instances counted: calls on the cap, leases and what they leased. */
    record Totals(
            long calls, long leases, long direct, long refused, long returns, long leasedRequests, long leasedTokens) {

        static Totals of(CountingStore[] counting) {
            long[] sum = new long[7];
            for (CountingStore c : counting) {
                sum[0] += c.budgetCalls();
                sum[1] += c.leasesTaken.get();
                sum[2] += c.budgetReserves.get();
                sum[3] += c.leasesRefused.get();
                sum[4] += c.leasesReturned.get();
                sum[5] += c.leasedRequests.get();
                sum[6] += c.leasedTokens.get();
            }
            return new Totals(sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6]);
        }

        Totals minus(Totals earlier) {
            return new Totals(
                    calls - earlier.calls,
                    leases - earlier.leases,
                    direct - earlier.direct,
                    refused - earlier.refused,
                    returns - earlier.returns,
                    leasedRequests - earlier.leasedRequests,
                    leasedTokens - earlier.leasedTokens);
        }
    }

    /** Logs a sample whose idle capacity exceeds the bound (none should). */
    private static void warnAbove(String unit, long idle, long bound, long atMillis) {
        if (idle > bound) {
            BenchmarkRunner.log(String.format(
                    Locale.ROOT,
                    "  idle %s %d above the bound %d at %d s",
                    unit,
                    idle,
                    bound,
                    (atMillis - START) / 1_000));
        }
    }

    private static long[] used(RateLimiter observer, SharedBudget budget, Window requests, Window tokens) {
        long[] used = {-1, -1};
        for (Decision.Usage usage : observer.usage(budget)) {
            if (usage.window().equals(requests)) {
                used[0] = usage.used();
            } else if (usage.window().equals(tokens)) {
                used[1] = usage.used();
            }
        }
        return used;
    }
}
