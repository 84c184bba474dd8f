package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the limiter spends leased budgets: sizes, store calls, deadlines, shares given back. */
class BudgetLeasesTest {

    private static final Tier TIER = Tier.of("t", Window.of(1_000_000, Duration.ofMinutes(1)));

    /** A clock the test moves. */
    private static final class TestClock extends Clock {
        long millis = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();

        @Override
        public long millis() {
            return millis;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }

    /** Admits everything; records the requests, the leases taken (with their time) and the returns. */
    private static class RecordingStore extends TestStore {
        final List<StoreRequest> requests = new ArrayList<>();
        final List<BudgetLease> leases = new ArrayList<>();
        final List<Long> takenAt = new ArrayList<>();
        final List<String> takenOn = new ArrayList<>();
        final List<long[]> returns = new ArrayList<>(); // stamp, requests kept, tokens kept
        int exchanges; // each also recorded as a return and a take
        boolean refuseLeases;
        boolean rejectRequests;

        @Override
        public synchronized Evaluation exchangeLease(
                BudgetLease returned,
                long stampMillis,
                long requestsUsed,
                Amounts used,
                BudgetLease taking,
                long nowMillis) {
            exchanges++;
            return super.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis);
        }

        /** The store calls made for leases: takes, returns, and exchanges (one call for a return and a take). */
        int leaseCalls() {
            return leases.size() + returns.size() - exchanges;
        }

        @Override
        public synchronized Evaluation evaluate(StoreRequest request) {
            requests.add(request);
            int n = request.windows().size();
            if (rejectRequests) {
                return Evaluation.rejected(request.nowMillis(), 0, 1_000, new long[n], new long[n]);
            }
            return Evaluation.allowed(request.nowMillis(), new long[n], new long[n]);
        }

        @Override
        public synchronized Evaluation takeLease(BudgetLease lease, long nowMillis) {
            int n = lease.budget().windows().size();
            if (refuseLeases) {
                return Evaluation.rejected(nowMillis, 0, 1_000, new long[n], new long[n]);
            }
            leases.add(lease);
            takenAt.add(nowMillis);
            takenOn.add(Thread.currentThread().getName());
            return Evaluation.allowed(nowMillis, new long[n], new long[n]);
        }

        @Override
        public synchronized void returnLease(
                BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
            returns.add(new long[] {stampMillis, requestsUsed, used.get(Window.Unit.TOKENS)});
        }

        boolean namesBudget(StoreRequest request) {
            return request.scopes().stream().anyMatch(StoreRequest.Scope::shared);
        }
    }

    private final TestClock clock = new TestClock();
    private final RecordingStore store = new RecordingStore();
    private final RateLimiter limiter =
            SlidingWindowRateLimiter.builder(store).clock(clock).build();
    private final SharedBudget budget = new SharedBudget(
                    "model",
                    List.of(
                            Window.of(100_000, Duration.ofMinutes(1)),
                            Window.tokens(10_000_000, Duration.ofMinutes(1))))
            .leased(Leasing.auto());

    private Reservation reserve(long tokens) {
        return limiter.reserve("user", TIER, Amounts.tokens(tokens), List.of(budget));
    }

    /** The requests before an adaptive lease pays: reserved per request, then forgotten by the store. */
    private void warmUp() {
        for (int i = 1; i < BudgetLeases.BUSY; i++) {
            reserve(0);
        }
        assertThat(store.leases).isEmpty();
        store.requests.clear();
    }

    @Test
    void aReservationWithALeasedShareHasTheReceiptOfWhatItHoldsInTheStore() {
        warmUp();
        Reservation leased = reserve(100);
        assertThat(store.leases).as("the share came from a lease").isNotEmpty();
        StoreRequest held = store.requests.get(store.requests.size() - 1);
        assertThat(store.namesBudget(held))
                .as("the store call held the user's windows only")
                .isFalse();

        Reservation restored = SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .build()
                .restore(leased.receipt().orElseThrow());
        assertThat(restored.decision().allowed()).isTrue();
        assertThat(restored.isSettled()).isFalse();
        restored.commit(Amounts.tokens(40)).toCompletableFuture().join();
        assertThat(restored.isSettled()).isTrue();
    }

    @Test
    void busyTrafficTakesFewLeasesAndNeverChargesTheBudgetPerRequest() {
        for (int i = 0; i < 5_000; i++) {
            Reservation reservation = reserve(100);
            assertThat(reservation.decision().allowed()).isTrue();
            reservation.commit(Amounts.tokens(100));
            clock.millis += 1;
        }
        assertThat(store.requests.stream().filter(store::namesBudget))
                .as("only the requests before the fourth, within a lease's duration, charge the budget per request")
                .hasSize(BudgetLeases.BUSY - 1);
        // a lease doubles while it runs low, then is sized by what the last one used in its second
        assertThat(store.leaseCalls())
                .as("store calls on the budget's keys for 5,000 requests")
                .isLessThanOrEqualTo(20);
        long lastFour = store.leases.subList(store.leases.size() - 4, store.leases.size()).stream()
                .mapToLong(BudgetLease::requests)
                .min()
                .orElseThrow();
        assertThat(lastFour)
                .as("a steady second's lease covers the second's 1,000 requests")
                .isGreaterThanOrEqualTo(1_000);
    }

    @Test
    void aBusyInstanceReturnsEachLeaseInTheCallThatTakesTheNext() {
        for (int i = 0; i < 5_000; i++) {
            reserve(100).commit(Amounts.tokens(100));
            clock.millis += 1;
        }
        assertThat(store.leases.size()).as("leases taken").isGreaterThan(5);
        assertThat(store.exchanges)
                .as("every lease after the first taken in the call that returned the one before")
                .isEqualTo(store.leases.size() - 1);
        assertThat(store.returns).as("none returned by a call of its own").hasSize(store.exchanges);
        assertThat(store.leaseCalls()).as("one store call per lease").isEqualTo(store.leases.size());
        limiter.returnLeases();
        assertThat(store.leaseCalls())
                .as("the last lease, with no lease after it, returned by a call of its own")
                .isEqualTo(store.leases.size() + 1);
    }

    @Test
    void aDecisionAdmittedFromASliceReportsTheBudgetAsTheStoreCountedIt() {
        warmUp();
        Reservation leased = reserve(100);
        assertThat(store.leases).as("the share came from a lease").hasSize(1);
        assertThat(leased.decision().usage())
                .filteredOn(usage -> "model".equals(usage.budget()))
                .as("the budget's two windows, as the lease's take counted them")
                .hasSize(2);
    }

    @Test
    void anAsynchronousReservationMakesItsLeaseCallOffTheCallersThread() {
        warmUp();
        Reservation leased = limiter.reserveAsync("user", TIER, Amounts.tokens(100), List.of(budget))
                .toCompletableFuture()
                .join();
        assertThat(leased.decision().allowed()).isTrue();
        // the first lease covers the request that took it: the second renews it, off the caller's thread too
        Reservation renewed = limiter.reserveAsync("user", TIER, Amounts.tokens(100), List.of(budget))
                .toCompletableFuture()
                .join();
        assertThat(renewed.decision().allowed()).isTrue();
        assertThat(store.exchanges)
                .as("the second lease taken with the first's return")
                .isEqualTo(1);
        assertThat(store.takenOn).hasSize(2).containsOnly("ratelimit-lease-calls");
    }

    @Test
    void aUnitThatDoesNotBindStaysNearItsUseWhileAnotherRunsLow() {
        for (int i = 0; i < 40_000; i++) {
            reserve(100).commit(Amounts.tokens(100));
            clock.millis += i % 2; // 2,000 requests a second: a lease's 1,000 run out in half its duration
        }
        // the requests ran low on every lease; the tokens used were a tenth of their ceiling
        BudgetLease last = store.leases.get(store.leases.size() - 1);
        assertThat(last.requests()).isEqualTo(1_000);
        assertThat(last.amounts().get(Window.Unit.TOKENS))
                .as("twice a lease's use of tokens (1,000 x 100), not the ceiling of 1,000,000 that doubling reaches")
                .isBetween(100_000L, 400_000L);
    }

    @Test
    void thinTrafficReservesPerRequest() {
        for (int i = 0; i < 10; i++) {
            reserve(100).commit(Amounts.tokens(100));
            clock.millis += 400; // fewer than four requests a lease's duration: a lease would not pay
        }
        assertThat(store.leases).isEmpty();
        assertThat(store.requests).hasSize(10).allMatch(store::namesBudget);
    }

    @Test
    void shortBurstsTakeSmallLeases() {
        for (int burst = 0; burst < 10; burst++) {
            for (int i = 0; i < 6; i++) {
                reserve(100).commit(Amounts.tokens(100));
                clock.millis += 2;
            }
            clock.millis += 3_000;
        }
        // each burst: three requests per request, then leases of at most twice what one served (3)
        assertThat(store.leases).isNotEmpty().allSatisfy(lease -> {
            assertThat(lease.requests()).isLessThanOrEqualTo(6);
            assertThat(lease.amounts().get(Window.Unit.TOKENS)).isLessThanOrEqualTo(600);
        });
    }

    @Test
    void aShareIsTakenOnlyBeforeTheLeaseEnds() {
        warmUp();
        reserve(10);
        long taken = store.takenAt.get(0);
        long stamp = store.leases.get(0).stampMillis(taken);
        clock.millis = stamp; // at the stamp the lease is over: returned, and this request reserved per request
        reserve(10);
        assertThat(store.leases).hasSize(1);
        assertThat(store.requests)
                .hasSize(2)
                .satisfiesExactly(
                        first -> assertThat(store.namesBudget(first)).isFalse(),
                        second -> assertThat(store.namesBudget(second)).isTrue());
        assertThat(store.returns).hasSize(1);
        assertThat(store.returns.get(0)).containsExactly(stamp, 1, 10);
    }

    @Test
    void aShareLargerThanALeaseMayBeIsReservedDirectly() {
        warmUp();
        Reservation big = reserve(2_000_000); // a tenth of the token limit is the most a lease takes
        assertThat(big.decision().allowed()).isTrue();
        assertThat(store.leases).isEmpty();
        assertThat(store.requests).hasSize(1).allMatch(store::namesBudget);
    }

    @Test
    void aRefusedLeaseFallsBackToReservingDirectlyForALeaseDuration() {
        warmUp();
        store.refuseLeases = true;
        reserve(10);
        reserve(10);
        assertThat(store.requests).hasSize(2).allMatch(store::namesBudget);
        store.refuseLeases = false;
        clock.millis += 1_000;
        for (int i = 0; i < BudgetLeases.BUSY; i++) {
            reserve(10);
        }
        assertThat(store.leases)
                .as("once four requests came within a lease's duration")
                .hasSize(1);
        assertThat(store.requests.get(store.requests.size() - 1).scopes()).hasSize(1);
    }

    @Test
    void aRejectionGivesTheShareBackAndSettlingAdjustsTheSlice() {
        warmUp();
        Reservation first = reserve(100); // lease of 1 request, 100 tokens: used up
        store.rejectRequests = true;
        assertThat(reserve(0).decision().allowed()).isFalse(); // a new lease of 2, 200: its share goes back
        store.rejectRequests = false;
        first.cancel(); // from a lease that has ended: stays counted in the store
        assertThat(reserve(150).decision().allowed()).isTrue(); // from the second lease
        assertThat(reserve(50).decision().allowed()).isTrue();
        assertThat(store.leases).hasSize(2);
        limiter.returnLeases();
        assertThat(store.returns.get(store.returns.size() - 1))
                .containsExactly(store.leases.get(1).stampMillis(store.takenAt.get(1)), 2, 200);
    }

    @Test
    void leasesListsTheLeaseHeldWithWhatWasUsedUntilItIsReturned() {
        warmUp();
        assertThat(limiter.leases()).as("none taken yet").isEmpty();
        reserve(100); // a lease of 1 request, 100 tokens: used up
        reserve(100).commit(Amounts.tokens(30)); // a lease of 2 requests, 200 tokens; 70 given back to it
        assertThat(limiter.leases())
                .containsExactly(new Leasing.Held(
                        "model",
                        java.util.Map.of(Window.Unit.REQUESTS, 2L, Window.Unit.TOKENS, 200L),
                        java.util.Map.of(Window.Unit.REQUESTS, 1L, Window.Unit.TOKENS, 30L),
                        Instant.ofEpochMilli(clock.millis + 1_000)));
        clock.millis += 1_000;
        assertThat(limiter.leases()).as("ended on the clock").isEmpty();
        limiter.returnLeases();
        assertThat(limiter.leases()).as("returned").isEmpty();
        assertThatThrownBy(() -> limiter.leases().clear()).isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void leasingNeedsExactSlidingWindows() {
        assertThatThrownBy(() -> SharedBudget.of(
                                "b", Window.of(10, Duration.ofMinutes(1)).withPrecision(Duration.ofSeconds(1)))
                        .leased(Leasing.auto()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leasing");
        assertThatThrownBy(() -> SharedBudget.of("b", Window.of(10, Duration.ofSeconds(1)))
                        .leased(Leasing.auto().withDuration(Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("duration");
        assertThatThrownBy(() -> Leasing.auto().withDuration(Duration.ofSeconds(2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("duration");
    }

    @Test
    void onTheRealClockALeaseIsReturnedAtItsEndWithoutAnotherRequest() throws InterruptedException {
        java.util.concurrent.CountDownLatch returned = new java.util.concurrent.CountDownLatch(1);
        RecordingStore quiet = new RecordingStore() {
            @Override
            public synchronized void returnLease(
                    BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
                super.returnLease(lease, stampMillis, requestsUsed, used, nowMillis);
                returned.countDown();
            }
        };
        RateLimiter real = SlidingWindowRateLimiter.builder(quiet).build(); // no clock: the store's time
        SharedBudget leased = SharedBudget.of("quiet", Window.of(100, Duration.ofMinutes(1)))
                .leased(Leasing.of(10, Amounts.none()).withDuration(Duration.ofMillis(20)));
        assertThat(real.reserve("user", TIER, Amounts.none(), List.of(leased))
                        .decision()
                        .allowed())
                .isTrue();
        // waits for the timer's return, not for a time: the event, or a failure after 30 s
        assertThat(returned.await(30, java.util.concurrent.TimeUnit.SECONDS))
                .as("the lease came back at its end though no request followed")
                .isTrue();
        assertThat(quiet.returns.get(0)[1]).as("the one request used stays").isEqualTo(1);
    }
}
