package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Section Q: concurrency leases (optional: {@code supportsLeases()}). */
interface LeaseRules extends ConformanceSection {

    Tier ROOMY = Tier.of("q", Window.of(1_000, MINUTE));

    private void assumeLeases(String rule) {
        assumeTrue(kit().supportsLeases(), "[" + rule + "] the store does not declare leases");
    }

    @Test
    @DisplayName("Q1 40 simultaneous reservations under a cap of 5 hold exactly 5; released at once, exactly 5 again")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void exactUnderConcurrency() throws Exception {
        assumeLeases("Q1");
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            String user = user("q1-" + trial);
            Concurrency cap = Concurrency.of(5);
            for (int round = 0; round < 2; round++) {
                Queue<Reservation> held = new ConcurrentLinkedQueue<>();
                int admitted = allowedOfRace(40, thread -> {
                    Reservation reservation = limiter().reserve(user, ROOMY, 0, List.of(), cap);
                    if (reservation.decision().allowed()) {
                        held.add(reservation);
                        return true;
                    }
                    return false;
                });
                assertThat(admitted)
                        .as("[Q1] trial %d round %d: admitted of 40 simultaneous reservations, cap 5", trial, round)
                        .isEqualTo(5);
                assertThat(limiter().inFlight(user))
                        .as("[Q1] trial %d round %d: slots held", trial, round)
                        .isEqualTo(5);
                // added to by the five releasing threads at once
                Queue<CompletableFuture<Void>> releases = new ConcurrentLinkedQueue<>();
                int releasing = allowedOfRace(held.size(), thread -> {
                    Reservation reservation = held.poll();
                    if (reservation == null) {
                        return false;
                    }
                    releases.add(reservation.commit(0).toCompletableFuture());
                    return true;
                });
                CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                        .join();
                assertThat(releasing).isEqualTo(5);
                assertThat(limiter().inFlight(user))
                        .as("[Q1] trial %d round %d: slots held once all 5 were released at once", trial, round)
                        .isZero();
            }
        }
    }

    @Test
    @DisplayName("Q2 a lease is released exactly once: releasing it again never frees another holder's slot")
    default void releasedExactlyOnce() {
        assumeLeases("Q2");
        String user = user("q2");
        List<Window> windows = List.of(Window.of(1_000, MINUTE));
        StoreRequest.Lease lease = new StoreRequest.Lease(user, false, 2, 60_000);
        long now = clock().millis();
        StoreRequest a = request(user, windows, "q2-a", now, lease);
        StoreRequest b = request(user, windows, "q2-b", now, lease);
        assertThat(store().evaluate(a).isAllowed())
                .as("[Q2] a takes the first of 2 slots")
                .isTrue();
        assertThat(store().evaluate(b).isAllowed())
                .as("[Q2] b takes the second")
                .isTrue();
        Settlement releaseA = new Settlement(a.scopes(), a.entryId(), now, 0, 0, now, lease);
        store().settle(releaseA);
        store().settle(releaseA);
        store().settle(releaseA);
        assertThat(store().leasesHeld(lease, now))
                .as("[Q2] a released three times: b still holds its slot, and only b")
                .isEqualTo(1);
        StoreRequest c = request(user, windows, "q2-c", now, lease);
        StoreRequest d = request(user, windows, "q2-d", now, lease);
        assertThat(store().evaluate(c).isAllowed()).as("[Q2] c takes a's slot").isTrue();
        Evaluation refused = store().evaluate(d);
        assertThat(refused.isLeaseRefused())
                .as("[Q2] b and c hold the cap of 2: d is refused by the lease, was %s", refused)
                .isTrue();
        assertThat(store().renewLease(lease, a.entryId(), now))
                .as("[Q2] a released is not renewed back")
                .isFalse();
    }

    @Test
    @DisplayName("Q3 a lease whose holder dies is dropped once its time passes, to the millisecond")
    default void expiresWhenHolderDies() {
        assumeLeases("Q3");
        String user = user("q3");
        Concurrency cap = new Concurrency(1, Duration.ofSeconds(10));
        Reservation dead = limiter().reserve(user, ROOMY, 0, List.of(), cap);
        assertThat(dead.decision().allowed())
                .as("[Q3] the holder takes the only slot")
                .isTrue();
        clock().advance(Duration.ofMillis(9_999));
        Reservation early = limiter().reserve(user, ROOMY, 0, List.of(), cap);
        assertThat(early.concurrencyLimited())
                .as("[Q3] 9.999 s later the dead holder's lease still holds the slot")
                .isTrue();
        clock().advance(Duration.ofMillis(1));
        Reservation after = limiter().reserve(user, ROOMY, 0, List.of(), cap);
        assertThat(after.decision().allowed())
                .as("[Q3] 10 s later its lease has passed: the slot is free, %s", after.decision())
                .isTrue();
        assertThat(limiter().inFlight(user)).as("[Q3] only the new holder").isEqualTo(1);
        settled(after.cancel());
    }

    @Test
    @DisplayName("Q4 a lease renewed while held outlives its first term; a released or lost lease is not renewed")
    default void renewedWhileHeld() {
        assumeLeases("Q4");
        String user = user("q4");
        Concurrency cap = new Concurrency(1, Duration.ofSeconds(10));
        Reservation stream = limiter().reserve(user, ROOMY, 0, List.of(), cap);
        assertThat(stream.decision().allowed()).isTrue();
        clock().advance(Duration.ofSeconds(8));
        assertThat(stream.renew().toCompletableFuture().join())
                .as("[Q4] renewed 8 s in, while held")
                .isTrue();
        clock().advance(Duration.ofSeconds(8));
        assertThat(limiter().reserve(user, ROOMY, 0, List.of(), cap).concurrencyLimited())
                .as("[Q4] 16 s after taking it (8 s after renewing) the slot is still held")
                .isTrue();
        clock().advance(Duration.ofSeconds(2));
        assertThat(stream.renew().toCompletableFuture().join())
                .as("[Q4] 10 s after the renewal the lease has passed: it is not brought back")
                .isFalse();
        Reservation next = limiter().reserve(user, ROOMY, 0, List.of(), cap);
        assertThat(next.decision().allowed())
                .as("[Q4] the lost slot is free for the next")
                .isTrue();
        settled(next.commit(0));
        assertThat(next.renew().toCompletableFuture().join())
                .as("[Q4] a settled reservation has no slot to renew")
                .isFalse();
        assertThat(limiter().inFlight(user))
                .as("[Q4] nothing held after the commit")
                .isZero();
    }

    @Test
    @DisplayName(
            "Q5 all or nothing: a reservation a window rejects takes no slot, and one its cap refuses charges no window")
    default void allOrNothing() {
        assumeLeases("Q5");
        String user = user("q5");
        Tier two = Tier.of("q5", Window.of(2, MINUTE));
        Concurrency cap = Concurrency.of(1);
        Reservation holder = limiter().reserve(user, two, 0, List.of(), cap);
        assertThat(holder.decision().allowed()).isTrue();
        for (int i = 0; i < 3; i++) {
            Reservation refused = limiter().reserve(user, two, 0, List.of(), cap);
            assertThat(refused.concurrencyLimited())
                    .as("[Q5] the cap of 1 is held: refused by the cap")
                    .isTrue();
            assertThat(refused.decision().allowed()).isFalse();
        }
        assertThat(limiter().usage(user, two).get(0).used())
                .as("[Q5] three refusals by the cap charged the window nothing: it holds the holder's request only")
                .isEqualTo(1);
        settled(holder.commit(0));
        Reservation second = limiter().reserve(user, two, 0, List.of(), cap);
        assertThat(second.decision().allowed())
                .as("[Q5] the freed slot and the window's 2nd request")
                .isTrue();
        settled(second.commit(0));
        Reservation third = limiter().reserve(user, two, 0, List.of(), cap);
        assertThat(third.decision().allowed()).as("[Q5] the window is full").isFalse();
        assertThat(third.concurrencyLimited())
                .as("[Q5] refused by the window, not the cap")
                .isFalse();
        assertThat(limiter().inFlight(user))
                .as("[Q5] the reservation the window rejected holds no slot")
                .isZero();
    }

    @Test
    @DisplayName("Q6 a cap holds over a user whose windows are all in shadow: the lease is taken in a scope of no"
            + " windows, alone or beside a shared budget, and released by the settlement")
    default void leaseOverShadowWindowsOnly() {
        assumeLeases("Q6");
        Window shadowed = Window.of(1, MINUTE).withMode(Window.Mode.SHADOW);
        Tier tier = Tier.of("q6", shadowed);
        Concurrency cap = Concurrency.of(1);
        for (List<SharedBudget> shared : List.of(
                List.<SharedBudget>of(),
                List.of(new SharedBudget(user("q6-budget"), List.of(Window.of(100, MINUTE)))))) {
            String user = user("q6-" + shared.size());
            Reservation holder = limiter().reserve(user, tier, Amounts.none(), shared, cap);
            assertThat(holder.decision().allowed())
                    .as("[Q6] the first takes the slot")
                    .isTrue();
            assertThat(limiter().inFlight(user)).as("[Q6] one slot held").isEqualTo(1);
            Reservation refused = limiter().reserve(user, tier, Amounts.none(), shared, cap);
            assertThat(refused.concurrencyLimited())
                    .as("[Q6] the cap of 1 refuses the second")
                    .isTrue();
            settled(holder.commit(Amounts.none()));
            assertThat(limiter().inFlight(user)).as("[Q6] released").isZero();
            Reservation again = limiter().reserve(user, tier, Amounts.none(), shared, cap);
            assertThat(again.decision().allowed()).as("[Q6] the freed slot").isTrue();
            assertThat(again.decision().shadowRefusals())
                    .as("[Q6] the shadow window of 1 a minute would refuse the second request it counts")
                    .hasSize(1);
            settled(again.cancel());
        }
    }

    @Test
    @DisplayName("Q7 40 simultaneous asynchronous reservations under a cap of 5 hold exactly 5, as the blocking ones"
            + " do; one a window refuses takes no slot")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void asyncUnderConcurrency() throws Exception {
        assumeLeases("Q7");
        String user = user("q7");
        Concurrency cap = Concurrency.of(5);
        Queue<CompletableFuture<Reservation>> answers = new ConcurrentLinkedQueue<>();
        allowedOfRace(40, thread -> {
            answers.add(limiter()
                    .reserveAsync(user, ROOMY, Amounts.none(), List.of(), cap)
                    .toCompletableFuture());
            return true;
        });
        List<Reservation> all = answers.stream().map(CompletableFuture::join).toList();
        List<Reservation> held =
                all.stream().filter(r -> r.decision().allowed()).toList();
        assertThat(held)
                .as("[Q7] admitted of 40 simultaneous asynchronous reservations, cap 5")
                .hasSize(5);
        assertThat(all.stream().filter(Reservation::concurrencyLimited).count())
                .as("[Q7] the other 35 are refused by the cap")
                .isEqualTo(35);
        assertThat(limiter().inFlight(user)).as("[Q7] slots held").isEqualTo(5);
        CompletableFuture.allOf(held.stream()
                        .map(r -> r.commit(Amounts.none()).toCompletableFuture())
                        .toArray(CompletableFuture[]::new))
                .join();
        assertThat(limiter().inFlight(user)).as("[Q7] released").isZero();
        Tier one = Tier.of("q7-one", Window.of(1, MINUTE));
        String alone = user("q7-window");
        Reservation first = limiter()
                .reserveAsync(alone, one, Amounts.none(), List.of(), cap)
                .toCompletableFuture()
                .join();
        assertThat(first.decision().allowed())
                .as("[Q7] the first fits the window of 1")
                .isTrue();
        Reservation second = limiter()
                .reserveAsync(alone, one, Amounts.none(), List.of(), cap)
                .toCompletableFuture()
                .join();
        assertThat(second.decision().allowed())
                .as("[Q7] the window of 1 a minute refuses the second")
                .isFalse();
        assertThat(second.concurrencyLimited())
                .as("[Q7] refused by its window, not the cap")
                .isFalse();
        assertThat(limiter().inFlight(alone))
                .as("[Q7] the refused one took no slot")
                .isEqualTo(1);
        settled(first.cancel());
        assertThat(limiter().inFlight(alone)).isZero();
    }

    private static StoreRequest request(
            String user, List<Window> windows, String entryId, long now, StoreRequest.Lease lease) {
        return new StoreRequest(List.of(StoreRequest.Scope.user(user, windows)), 0, entryId, now, lease);
    }
}
