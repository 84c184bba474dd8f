package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Section F: leased shares of shared budgets (optional: {@code supportsBudgetLeases()}). An instance
 * takes a slice of a shared budget in one atomic store call ({@code WindowStore.takeLease}), spends
 * it in memory and returns what it did not use ({@code WindowStore.returnLease}). A lease is an entry
 * stamped at its end: it counts from its taking until its end plus the window's length, so no unit
 * leaves the window before any use of it could. The rules F6 to F9 run three limiters on one store
 * and one injected clock. F10 and F11 renew: one lease returned and the next taken in one step
 * ({@code WindowStore.exchangeLease}), the return first.
 */
interface BudgetLeaseRules extends ConformanceSection {

    Duration TEN_SECONDS = Duration.ofSeconds(10);
    Tier ROOMY = Tier.of("f", Window.of(100_000, MINUTE));

    private void assumeBudgetLeases(String rule) {
        assumeTrue(kit().supportsBudgetLeases(), "[" + rule + "] the store does not declare budget leases");
    }

    private StoreRequest.Scope budget(String name, long requests, long tokens) {
        return StoreRequest.Scope.shared(
                user(name), List.of(Window.of(requests, MINUTE), Window.tokens(tokens, MINUTE)));
    }

    private long[] usedAt(StoreRequest.Scope budget, long nowMillis) {
        Evaluation seen = store().peek(new StoreRequest(List.of(budget), Amounts.none(), nowMillis));
        return new long[] {seen.used(0), seen.used(1)};
    }

    private RateLimiter another() {
        return SlidingWindowRateLimiter.builder(store())
                .clock(clock())
                .failOpen(false)
                .build();
    }

    private static long usedOf(List<Decision.Usage> usage, Window window) {
        return usage.stream()
                .filter(u -> u.window().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    @Test
    @DisplayName("F1 a lease counts from its taking until its end plus the window's length: a dead holder's"
            + " slice comes back then, not before")
    default void countsUntilItsEndPlusTheLength() {
        assumeBudgetLeases("F1");
        StoreRequest.Scope budget = budget("f1", 10, 1_000);
        long t0 = clock().millis();
        BudgetLease lease = new BudgetLease(budget, 4, Amounts.tokens(300), user("f1-lease"), 1_000);
        Evaluation taken = store().takeLease(lease, t0);
        assertThat(taken.isAllowed())
                .as("[F1] a lease of 4 requests and 300 tokens")
                .isTrue();
        assertThat(new long[] {taken.used(0), taken.used(1)})
                .as("[F1] counted at once")
                .containsExactly(4, 300);
        assertThat(usedAt(budget, t0 + MINUTE.toMillis()))
                .as("[F1] still counted a window's length after its taking (a use at its end counts a length more)")
                .containsExactly(4, 300);
        assertThat(usedAt(budget, t0 + 1_000 + MINUTE.toMillis() - 1))
                .as("[F1] still counted a millisecond before its end plus the length")
                .containsExactly(4, 300);
        assertThat(usedAt(budget, t0 + 1_000 + MINUTE.toMillis()))
                .as("[F1] gone at its end plus the length, never returned")
                .containsExactly(0, 0);
    }

    @Test
    @DisplayName("F2 a lease is taken whole where every window has room for all of it, or not at all")
    default void allOrNothing() {
        assumeBudgetLeases("F2");
        StoreRequest.Scope budget = budget("f2", 10, 1_000);
        long t0 = clock().millis();
        assertThat(store().takeLease(new BudgetLease(budget, 8, Amounts.tokens(100), user("f2-a"), 1_000), t0)
                        .isAllowed())
                .as("[F2] 8 of 10 requests")
                .isTrue();
        Evaluation refused =
                store().takeLease(new BudgetLease(budget, 3, Amounts.tokens(100), user("f2-b"), 1_000), t0 + 10);
        assertThat(refused.isAllowed()).as("[F2] 3 more requests do not fit").isFalse();
        assertThat(refused.rejectedIndex())
                .as("[F2] the request window refuses")
                .isEqualTo(0);
        assertThat(refused.retryAfterMillis())
                .as("[F2] room returns when the first lease leaves: its end plus the length")
                .isEqualTo(1_000 + MINUTE.toMillis() - 10);
        Evaluation tokens =
                store().takeLease(new BudgetLease(budget, 2, Amounts.tokens(901), user("f2-c"), 1_000), t0 + 20);
        assertThat(tokens.isAllowed()).as("[F2] 901 more tokens do not fit").isFalse();
        assertThat(tokens.rejectedIndex()).as("[F2] the token window refuses").isEqualTo(1);
        assertThat(usedAt(budget, t0 + 30))
                .as("[F2] the refused leases recorded nothing")
                .containsExactly(8, 100);
        assertThat(store().takeLease(new BudgetLease(budget, 2, Amounts.tokens(900), user("f2-d"), 1_000), t0 + 40)
                        .isAllowed())
                .as("[F2] exactly the rest fits")
                .isTrue();
        assertThat(store().takeLease(new BudgetLease(budget, 11, Amounts.none(), user("f2-e"), 1_000), t0 + 50)
                        .isTooLarge())
                .as("[F2] a lease larger than the limit is too large")
                .isTrue();
    }

    @Test
    @DisplayName("F3 a returned lease gives back what it did not use at once; what it used stays until its end"
            + " plus the length; returning again changes nothing")
    default void returnGivesBackTheRest() {
        assumeBudgetLeases("F3");
        StoreRequest.Scope budget = budget("f3", 10, 1_000);
        long t0 = clock().millis();
        BudgetLease lease = new BudgetLease(budget, 10, Amounts.tokens(1_000), user("f3-a"), 1_000);
        long stamp = lease.stampMillis(store().takeLease(lease, t0).nowMillis());
        assertThat(stamp).as("[F3] the lease's stamp is its end").isEqualTo(t0 + 1_000);
        store().returnLease(lease, stamp, 3, Amounts.tokens(250), t0 + 500);
        assertThat(usedAt(budget, t0 + 500))
                .as("[F3] 3 requests and 250 tokens kept")
                .containsExactly(3, 250);
        assertThat(store().takeLease(new BudgetLease(budget, 7, Amounts.tokens(750), user("f3-b"), 1_000), t0 + 500)
                        .isAllowed())
                .as("[F3] the rest is available to another holder at the same instant")
                .isTrue();
        store().returnLease(lease, stamp, 0, Amounts.none(), t0 + 600);
        assertThat(usedAt(budget, t0 + 600))
                .as("[F3] returning the same lease again gives nothing more back")
                .containsExactly(10, 1_000);
        assertThat(usedAt(budget, stamp + MINUTE.toMillis() - 1))
                .as("[F3] the kept part counts until the lease's end plus the length")
                .containsExactly(10, 1_000);
        assertThat(usedAt(budget, stamp + MINUTE.toMillis()))
                .as("[F3] then only the second lease (taken 500 ms later) counts")
                .containsExactly(7, 750);
    }

    @Test
    @DisplayName("F4 a lease whose taking may not have run is given back whole where it was recorded, and"
            + " nothing changes where it was not")
    default void inDoubt() {
        assumeBudgetLeases("F4");
        StoreRequest.Scope budget = budget("f4", 10, 1_000);
        long t0 = clock().millis();
        store().takeLease(new BudgetLease(budget, 2, Amounts.tokens(20), user("f4-kept"), 1_000), t0);
        BudgetLease never = new BudgetLease(budget, 5, Amounts.tokens(50), user("f4-never"), 1_000);
        store().returnLease(never, Settlement.IN_DOUBT, 0, Amounts.none(), t0 + 10);
        assertThat(usedAt(budget, t0 + 10))
                .as("[F4] a lease never recorded frees nothing")
                .containsExactly(2, 20);
        BudgetLease ran = new BudgetLease(budget, 5, Amounts.tokens(50), user("f4-ran"), 1_000);
        store().takeLease(ran, t0 + 20);
        store().returnLease(ran, Settlement.IN_DOUBT, 0, Amounts.none(), t0 + 30);
        assertThat(usedAt(budget, t0 + 30))
                .as("[F4] a lease recorded is given back whole")
                .containsExactly(2, 20);
    }

    @Test
    @DisplayName("F5 30 threads racing for leases of 3 under a limit of 30 get exactly 10")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void exactUnderConcurrency() throws Exception {
        assumeBudgetLeases("F5");
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            StoreRequest.Scope budget = StoreRequest.Scope.shared(user("f5-" + trial), List.of(Window.of(30, MINUTE)));
            long now = clock().millis();
            String prefix = user("f5-lease-" + trial + "-");
            int granted = allowedOfRace(
                    30,
                    thread -> store().takeLease(new BudgetLease(budget, 3, Amounts.none(), prefix + thread, 1_000), now)
                            .isAllowed());
            assertThat(granted)
                    .as("[F5] trial %d: leases of 3 granted under 30", trial)
                    .isEqualTo(10);
            Evaluation seen = store().peek(new StoreRequest(List.of(budget), Amounts.none(), now));
            assertThat(seen.used(0)).as("[F5] trial %d: requests leased", trial).isEqualTo(30);
        }
    }

    @Test
    @DisplayName("F6 three limiters leasing one budget never admit more than its limit in any window-length"
            + " span, across window edges")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void neverOverAdmitsAcrossInstances() {
        assumeBudgetLeases("F6");
        Window requests = Window.of(30, TEN_SECONDS);
        Window tokens = Window.tokens(600, TEN_SECONDS);
        SharedBudget budget = new SharedBudget(user("f6"), List.of(requests, tokens)).leased(Leasing.auto());
        List<RateLimiter> limiters = List.of(limiter(), another(), another());
        List<long[]> admitted = new ArrayList<>(); // time, tokens
        // 40 s in steps of 150 ms: four windows and their edges, each limiter asking twice a step
        for (int step = 0; step < 267; step++) {
            for (int l = 0; l < limiters.size(); l++) {
                for (int k = 0; k < 2; k++) {
                    long estimate = 5 + (step * 7 + l * 3 + k) % 11;
                    Reservation reservation = limiters.get(l)
                            .reserve(user("f6-user-" + l), ROOMY, Amounts.tokens(estimate), List.of(budget));
                    if (reservation.decision().allowed()) {
                        admitted.add(new long[] {clock().millis(), estimate});
                        if ((step + k) % 3 == 0) {
                            settled(reservation.commit(Amounts.tokens(estimate))); // exactly as estimated
                        } else if ((step + k) % 3 == 1) {
                            settled(reservation.commit(Amounts.tokens(estimate - 3))); // a refund
                        } else {
                            settled(reservation.commit(Amounts.tokens(estimate)));
                        }
                    }
                }
            }
            clock().advanceMillis(150);
        }
        long most = 0;
        long mostTokens = 0;
        for (long[] first : admitted) {
            long count = 0;
            long sum = 0;
            for (long[] other : admitted) {
                if (other[0] >= first[0] && other[0] < first[0] + TEN_SECONDS.toMillis()) {
                    count++;
                    sum += other[1];
                }
            }
            most = Math.max(most, count);
            mostTokens = Math.max(mostTokens, sum);
        }
        assertThat(most).as("[F6] requests admitted in a 10 s span, of 30").isLessThanOrEqualTo(30);
        assertThat(mostTokens).as("[F6] tokens reserved in a 10 s span, of 600").isLessThanOrEqualTo(600);
        assertThat(admitted.size())
                .as("[F6] across four windows the budget was used, not parked")
                .isGreaterThanOrEqualTo(60);
    }

    @Test
    @DisplayName("F7 settling against a lease: a refund goes back to the slice, an overrun beyond it is charged"
            + " to the store")
    default void settlesAgainstTheLease() throws InterruptedException {
        assumeBudgetLeases("F7");
        Window requests = Window.of(100, MINUTE);
        Window tokens = Window.tokens(10_000, MINUTE);
        SharedBudget budget =
                new SharedBudget(user("f7"), List.of(requests, tokens)).leased(Leasing.of(5, Amounts.tokens(100)));
        Reservation first = limiter().reserve(user("f7-user"), ROOMY, Amounts.tokens(40), List.of(budget));
        assertThat(first.decision().allowed())
                .as("[F7] the first reservation takes a lease")
                .isTrue();
        List<Decision.Usage> leased = limiter().usage(budget);
        assertThat(new long[] {usedOf(leased, requests), usedOf(leased, tokens)})
                .as("[F7] the store counts the whole lease: 5 requests, 100 tokens")
                .containsExactly(5, 100);
        settled(first.commit(Amounts.tokens(30))); // 10 back to the slice: 70 left
        Reservation second = limiter().reserve(user("f7-user"), ROOMY, Amounts.tokens(70), List.of(budget));
        assertThat(second.decision().allowed())
                .as("[F7] the refund made room in the slice for 70")
                .isTrue();
        assertThat(usedOf(limiter().usage(budget), tokens))
                .as("[F7] still one lease in the store")
                .isEqualTo(100);
        settled(second.commit(Amounts.tokens(150))); // 80 over, the slice is empty: charged to the store
        assertThat(limiter().awaitSettlements(Duration.ofSeconds(30))).isTrue();
        assertThat(usedOf(limiter().usage(budget), tokens))
                .as("[F7] the overrun beyond the slice is charged to the store")
                .isEqualTo(180);
        limiter().returnLeases();
        List<Decision.Usage> returned = limiter().usage(budget);
        assertThat(new long[] {usedOf(returned, requests), usedOf(returned, tokens)})
                .as("[F7] returned: the 2 requests used stay, 3 go back; the tokens were all used")
                .containsExactly(2, 180);
    }

    @Test
    @DisplayName("F8 what a limiter returns is at once available to another; a holder that stops holds its"
            + " slice until the lease's end plus the length")
    default void returnedAtOnceOrHeldUntilExpiry() {
        assumeBudgetLeases("F8");
        Window requests = Window.of(10, MINUTE);
        SharedBudget budget = new SharedBudget(user("f8"), List.of(requests))
                .leased(Leasing.of(5, Amounts.none()).withDuration(Duration.ofMillis(500)));
        RateLimiter a = limiter();
        RateLimiter b = another();
        RateLimiter c = another();
        long t0 = clock().millis();
        assertThat(allowed(a, "f8-a", budget)).as("[F8] a takes a lease of 5").isTrue();
        assertThat(allowed(b, "f8-b", budget)).as("[F8] b takes a lease of 5").isTrue();
        assertThat(usedOf(a.usage(budget), requests))
                .as("[F8] the budget is all leased")
                .isEqualTo(10);
        a.returnLeases();
        assertThat(usedOf(a.usage(budget), requests))
                .as("[F8] a returned 4: it keeps the one it used")
                .isEqualTo(6);
        int admitted = 0;
        for (int i = 0; i < 6; i++) {
            if (allowed(c, "f8-c", budget)) {
                admitted++;
            }
        }
        assertThat(admitted)
                .as("[F8] c admits exactly the 4 a returned, at the same instant")
                .isEqualTo(4);
        // b stops without returning its lease
        clock().advance(MINUTE);
        assertThat(usedOf(a.usage(budget), requests))
                .as("[F8] a window later c's 4 have left; b's lease and a's kept one, stamped at their end, hold")
                .isEqualTo(6);
        clock().advanceMillis(t0 + 500 + MINUTE.toMillis() - clock().millis() - 1);
        assertThat(usedOf(a.usage(budget), requests))
                .as("[F8] a millisecond before the lease's end plus the length, still held")
                .isEqualTo(6);
        clock().advanceMillis(1);
        assertThat(usedOf(a.usage(budget), requests))
                .as("[F8] at the lease's end plus the length, b's slice is back")
                .isEqualTo(0);
    }

    private boolean allowed(RateLimiter limiter, String user, SharedBudget budget) {
        return limiter.reserve(user(user), ROOMY, Amounts.none(), List.of(budget))
                .decision()
                .allowed();
    }

    @Test
    @DisplayName("F9 60 threads across three leasing limiters, limit 30: at most 30 admitted, and once the"
            + " leases are returned the store counts exactly those admitted")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void exactAcrossInstancesUnderConcurrency() throws Exception {
        assumeBudgetLeases("F9");
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            Window requests = Window.of(30, MINUTE);
            SharedBudget budget = new SharedBudget(user("f9-" + trial), List.of(requests)).leased(Leasing.auto());
            List<RateLimiter> limiters = List.of(limiter(), another(), another());
            int admitted = allowedOfRace(
                    60,
                    thread -> limiters.get(thread % 3)
                            .reserve(user("f9-user-" + thread), ROOMY, Amounts.none(), List.of(budget))
                            .decision()
                            .allowed());
            assertThat(admitted)
                    .as("[F9] trial %d: admitted of 60, limit 30", trial)
                    .isBetween(1, 30);
            for (RateLimiter limiter : limiters) {
                limiter.returnLeases();
            }
            assertThat(usedOf(limiter().usage(budget), requests))
                    .as("[F9] trial %d: counted once the leases are returned", trial)
                    .isEqualTo(admitted);
        }
    }

    @Test
    @DisplayName("F10 an exchange returns one lease and takes the next in one step: the next is taken against"
            + " what the first gave back, the return applies also when the take is refused, and applies once")
    default void exchangeReturnsThenTakes() {
        assumeBudgetLeases("F10");
        StoreRequest.Scope budget = budget("f10", 10, 1_000);
        long t0 = clock().millis();
        BudgetLease a = new BudgetLease(budget, 10, Amounts.tokens(1_000), user("f10-a"), 1_000);
        long stampA = a.stampMillis(store().takeLease(a, t0).nowMillis());
        BudgetLease b = new BudgetLease(budget, 7, Amounts.tokens(750), user("f10-b"), 1_000);
        Evaluation renewed = store().exchangeLease(a, stampA, 3, Amounts.tokens(250), b, t0 + 500);
        assertThat(renewed.isAllowed())
                .as("[F10] the budget is all leased to a, yet b fits in what a gives back")
                .isTrue();
        assertThat(new long[] {renewed.used(0), renewed.used(1)})
                .as("[F10] the take reports the budget after both: a's 3 and 250 kept, b's 7 and 750")
                .containsExactly(10, 1_000);
        long stampB = b.stampMillis(renewed.nowMillis());
        assertThat(stampB).as("[F10] b's stamp is its own end").isEqualTo(t0 + 1_500);
        store().returnLease(a, stampA, 0, Amounts.none(), t0 + 510);
        assertThat(usedAt(budget, t0 + 510))
                .as("[F10] a returned again, by itself, changes nothing")
                .containsExactly(10, 1_000);
        BudgetLease c = new BudgetLease(budget, 9, Amounts.tokens(100), user("f10-c"), 1_000);
        Evaluation refused = store().exchangeLease(b, stampB, 2, Amounts.tokens(100), c, t0 + 600);
        assertThat(refused.isAllowed())
                .as("[F10] 9 more requests do not fit beside a's 3 and b's 2")
                .isFalse();
        assertThat(refused.rejectedIndex())
                .as("[F10] the request window refuses")
                .isEqualTo(0);
        assertThat(usedAt(budget, t0 + 600))
                .as("[F10] b was returned though c was refused: a's 3 and 250, b's 2 and 100")
                .containsExactly(5, 350);
        BudgetLease d = new BudgetLease(budget, 4, Amounts.tokens(50), user("f10-d"), 1_000);
        Evaluation retried = store().exchangeLease(b, stampB, 0, Amounts.none(), d, t0 + 700);
        assertThat(retried.isAllowed())
                .as("[F10] an exchange naming b again (a retry) takes d")
                .isTrue();
        assertThat(usedAt(budget, t0 + 700))
                .as("[F10] and does not return b twice: its 2 and 100 still kept, d's 4 and 50 added")
                .containsExactly(9, 400);
        assertThat(usedAt(budget, stampA + MINUTE.toMillis()))
                .as("[F10] a's kept part leaves at its end plus the length; b's and d's stay")
                .containsExactly(6, 150);
        assertThat(usedAt(budget, stampB + MINUTE.toMillis()))
                .as("[F10] b's kept part leaves at its own end plus the length")
                .containsExactly(4, 50);
    }

    @Test
    @DisplayName("F11 10 holders of the whole budget renewing at once, each keeping 1 of 3 and asking 3 more:"
            + " exactly 6 renewed, and the window holds exactly 28")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void exchangesExactUnderConcurrency() throws Exception {
        assumeBudgetLeases("F11");
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            StoreRequest.Scope budget = StoreRequest.Scope.shared(user("f11-" + trial), List.of(Window.of(30, MINUTE)));
            long now = clock().millis();
            String prefix = user("f11-lease-" + trial + "-");
            List<BudgetLease> held = new ArrayList<>();
            List<Long> stamps = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                BudgetLease lease = new BudgetLease(budget, 3, Amounts.none(), prefix + i, 1_000);
                stamps.add(lease.stampMillis(store().takeLease(lease, now).nowMillis()));
                held.add(lease);
            }
            // each exchange frees 2 then takes 3 if they fit: whatever the order, the sixth that fits is the last
            int renewed = allowedOfRace(
                    10,
                    thread -> store().exchangeLease(
                                    held.get(thread),
                                    stamps.get(thread),
                                    1,
                                    Amounts.none(),
                                    new BudgetLease(budget, 3, Amounts.none(), prefix + "next-" + thread, 1_000),
                                    now + 10)
                            .isAllowed());
            assertThat(renewed).as("[F11] trial %d: renewed of 10", trial).isEqualTo(6);
            Evaluation seen = store().peek(new StoreRequest(List.of(budget), Amounts.none(), now + 10));
            assertThat(seen.used(0))
                    .as("[F11] trial %d: 10 kept and 6 leases of 3", trial)
                    .isEqualTo(28);
        }
    }
}
