package dev.ratelimit.inmemory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A model of N instances sharing one leased budget on one store and one injected clock, no Redis:
 * each instance sends requests at its own steady rate (the fleet together at 80% of the budget,
 * then at 120%), and the run counts the store calls that touch the budget's keys, with and without
 * leasing, the most admitted in any window-length span, and the capacity left idle in leases at the
 * end. It checks the design past what one machine can run as separate processes.
 */
class LeaseSimulationTest {

    private static final Instant T0 = Instant.parse("2026-06-01T00:00:00Z");
    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Window RPM = Window.of(60_000, MINUTE);
    private static final Window TPM = Window.tokens(6_000_000, MINUTE);
    private static final Tier TENANT = Tier.of("tenant", Window.of(1_000_000, MINUTE));
    private static final long SECONDS = 150;

    /** A store that counts the calls touching the shared budget's keys. */
    private static final class Counting extends ForwardingStore {
        final AtomicLong calls = new AtomicLong();

        Counting(InMemoryWindowStore store) {
            super(store);
        }

        private void count(List<StoreRequest.Scope> scopes) {
            if (scopes.stream().anyMatch(StoreRequest.Scope::shared)) {
                calls.incrementAndGet();
            }
        }

        @Override
        public Evaluation evaluate(StoreRequest request) {
            count(request.scopes());
            return super.evaluate(request);
        }

        @Override
        public void settle(Settlement settlement) {
            count(settlement.scopes());
            super.settle(settlement);
        }

        @Override
        public Evaluation takeLease(BudgetLease lease, long nowMillis) {
            calls.incrementAndGet();
            return super.takeLease(lease, nowMillis);
        }

        @Override
        public Evaluation exchangeLease(
                BudgetLease returned,
                long stampMillis,
                long requestsUsed,
                Amounts used,
                BudgetLease taking,
                long nowMillis) {
            calls.incrementAndGet(); // one call: the return rides on the next lease's take
            return super.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis);
        }

        @Override
        public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
            calls.incrementAndGet();
            super.returnLease(lease, stampMillis, requestsUsed, used, nowMillis);
        }
    }

    /** What one run measured. */
    private record Run(long requests, long admitted, long calls, long mostInASpan, long idleAtEnd) {}

    private static Run run(int instances, double load, boolean leased) {
        MutableClock clock = MutableClock.at(T0);
        Counting store = new Counting(InMemoryWindowStore.create(clock));
        SharedBudget plain = new SharedBudget("cap", List.of(RPM, TPM));
        SharedBudget cap = leased ? plain.leased(Leasing.auto()) : plain;
        List<RateLimiter> limiters = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            limiters.add(SlidingWindowRateLimiter.builder(store).clock(clock).build());
        }
        // the fleet sends `load` times the budget's rate, spread evenly over the instances
        double perSecond = load * RPM.limit() / 60.0 / instances;
        long gapMicros = Math.round(1_000_000 / perSecond);
        Random random = new Random(instances * 31L + (leased ? 1 : 0));
        PriorityQueue<long[]> next = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0])); // micros, instance
        for (int i = 0; i < instances; i++) {
            next.add(new long[] {random.nextInt((int) Math.min(Integer.MAX_VALUE, gapMicros)), i});
        }
        long end = SECONDS * 1_000_000;
        List<Long> admittedAt = new ArrayList<>();
        long requests = 0;
        while (!next.isEmpty() && next.peek()[0] < end) {
            long[] event = next.poll();
            clock.set(T0.plusMillis(event[0] / 1_000));
            int instance = (int) event[1];
            requests++;
            Reservation reservation =
                    limiters.get(instance).reserve("tenant-" + instance, TENANT, Amounts.tokens(100), List.of(cap));
            if (reservation.decision().allowed()) {
                admittedAt.add(clock.millis());
                reservation.commit(Amounts.tokens(100));
            }
            next.add(new long[] {event[0] + gapMicros, instance});
        }
        long most = 0;
        int from = 0;
        for (int to = 0; to < admittedAt.size(); to++) {
            while (admittedAt.get(from) <= admittedAt.get(to) - MINUTE.toMillis()) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        long before = used(limiters.get(0).usage(plain));
        for (RateLimiter limiter : limiters) {
            limiter.returnLeases();
        }
        long after = used(limiters.get(0).usage(plain));
        return new Run(requests, admittedAt.size(), store.calls.get(), most, before - after);
    }

    private static long used(List<Decision.Usage> usage) {
        return usage.stream()
                .filter(u -> u.window().equals(RPM))
                .findFirst()
                .orElseThrow()
                .used();
    }

    @ParameterizedTest(name = "{0} instances at {1} of the budget")
    @CsvSource({"10, 0.8", "100, 0.8", "1000, 0.8", "10, 1.2", "100, 1.2"})
    void aFleetLeasingOneBudget(int instances, double load) {
        Run leased = run(instances, load, true);
        Run plain = run(instances, load, false);
        System.out.printf(
                "lease simulation: %4d instances at %.0f%% of 60,000 rpm (%.1f req/s each), %d s:"
                        + " admitted %d of %d; store calls on the budget %.1f/s leased, %.1f/s per request"
                        + " (%.1f and %.1f per 1,000 admitted); most in a minute %d; idle in leases at the end %d%n",
                instances,
                load * 100,
                load * 1_000 / instances,
                SECONDS,
                leased.admitted(),
                leased.requests(),
                leased.calls() / (double) SECONDS,
                plain.calls() / (double) SECONDS,
                1_000.0 * leased.calls() / Math.max(1, leased.admitted()),
                1_000.0 * plain.calls() / Math.max(1, plain.admitted()),
                leased.mostInASpan(),
                leased.idleAtEnd());
        assertThat(leased.mostInASpan())
                .as("admitted in any minute across %d instances", instances)
                .isLessThanOrEqualTo(RPM.limit());
        assertThat(leased.calls())
                .as("leasing never costs the budget's keys more calls than reserving per request")
                .isLessThanOrEqualTo(plain.calls());
        assertThat(leased.idleAtEnd()).as("idle at the end, never negative").isGreaterThanOrEqualTo(0);
    }
}
