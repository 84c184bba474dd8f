package dev.ratelimit.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The limiter's side of reservations: validation, settling policy, and failures while settling. */
class ReservationTest {

    private static final Tier TIER =
            Tier.of("t", Window.of(10, Duration.ofMinutes(1)), Window.tokens(1_000, Duration.ofMinutes(1)));

    /** Admits everything and remembers the settlements it was sent; can be made to fail settling. */
    static final class RecordingStore extends TestStore {
        final List<StoreRequest> requests = new CopyOnWriteArrayList<>();
        final List<Settlement> settlements = new CopyOnWriteArrayList<>();
        final AtomicBoolean settleFails = new AtomicBoolean();

        @Override
        public Evaluation evaluate(StoreRequest request) {
            requests.add(request);
            long[] used = new long[request.windows().size()];
            Arrays.fill(used, 1);
            return Evaluation.allowed(42, used, new long[used.length]);
        }

        @Override
        public void settle(Settlement settlement) {
            if (settleFails.get()) {
                throw new RateLimiterUnavailableException("store down while settling (test)");
            }
            settlements.add(settlement);
        }
    }

    @Test
    @DisplayName("a reservation rebuilt from its receipt, in another limiter on the store, settles the same entry,"
            + " scopes, windows, time and estimate as the original would have")
    void restoredFromReceipt() {
        RecordingStore store = new RecordingStore();
        RateLimiter admitting = SlidingWindowRateLimiter.builder(store).build();
        SharedBudget team = SharedBudget.of(
                "team:r&d, \"night\"",
                Window.calendar(
                        "spend-month",
                        5_000_000,
                        Window.Unit.USD_MICROS,
                        dev.ratelimit.api.CalendarPeriod.MONTH,
                        java.time.ZoneId.of("America/New_York")),
                new Window("tpm", 9_000, Duration.ofMinutes(1), Window.Unit.TOKENS, Duration.ofSeconds(1)));
        dev.ratelimit.api.Amounts estimate =
                dev.ratelimit.api.Amounts.tokens(700).and(Window.Unit.USD_MICROS, 1_234);
        Reservation original = admitting.reserve("user one", TIER, estimate, List.of(team));
        String receipt = original.receipt().orElseThrow();

        RateLimiter settling = SlidingWindowRateLimiter.builder(store).build();
        Reservation restored = settling.restore(receipt);
        assertThat(restored.decision().allowed()).isTrue();
        assertThat(restored.isSettled()).isFalse();
        restored.commit(dev.ratelimit.api.Amounts.tokens(300).and(Window.Unit.USD_MICROS, 500))
                .toCompletableFuture()
                .join();
        original.commit(dev.ratelimit.api.Amounts.tokens(300).and(Window.Unit.USD_MICROS, 500))
                .toCompletableFuture()
                .join();

        assertThat(store.settlements).hasSize(2);
        Settlement rebuilt = store.settlements.get(0);
        Settlement own = store.settlements.get(1);
        assertThat(rebuilt.entryId()).isEqualTo(own.entryId());
        assertThat(rebuilt.reservedAtMillis()).isEqualTo(own.reservedAtMillis()).isEqualTo(42);
        assertThat(rebuilt.scopes()).isEqualTo(own.scopes());
        assertThat(rebuilt.estimate()).isEqualTo(own.estimate()).isEqualTo(estimate);
        assertThat(rebuilt.actual()).isEqualTo(own.actual());
        assertThat(rebuilt.lease()).isNull();

        assertThat(admitting.reserve("u", TIER, 0).receipt()).isPresent();
        assertThat(SlidingWindowRateLimiter.builder(store)
                        .disabled(true)
                        .build()
                        .reserve("u", TIER, 5)
                        .receipt())
                .as("a disabled limiter holds nothing: no receipt")
                .isEmpty();
        assertThatThrownBy(() -> settling.restore("not a receipt"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("receipt");
    }

    @Test
    @DisplayName("bad reservation arguments are refused before the store is called, naming the argument")
    void validation() {
        RecordingStore store = new RecordingStore();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
        assertThatThrownBy(() -> limiter.reserve("u", TIER, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("estimatedTokens");
        assertThatThrownBy(() -> limiter.reserve("u", null, 1))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("tier");
        assertThatThrownBy(() -> limiter.reserve("u", TIER, 1, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("shared");
        SharedBudget upstream = SharedBudget.of("up", Window.of(5, Duration.ofMinutes(1)));
        assertThatThrownBy(() -> limiter.reserve("u", TIER, 1, List.of(upstream, upstream)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("shared");
        assertThatThrownBy(() -> limiter.reserveAsync("", TIER, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("userId");
        assertThat(store.requests).isEmpty();
        Reservation reservation = limiter.reserve("u", TIER, 10);
        assertThatThrownBy(() -> reservation.commit(-5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("actualTokens");
        assertThat(reservation.isSettled())
                .as("a refused commit settles nothing")
                .isFalse();
    }

    @Test
    @DisplayName("a reservation larger than a token window's limit is rejected as too large without a store call")
    void tooLargeNeedsNoStore() {
        RecordingStore store = new RecordingStore();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
        Decision decision = limiter.reserve("u", TIER, 1_001).decision();
        assertThat(decision.allowed()).isFalse();
        assertThat(decision.tooLarge()).isTrue();
        assertThat(decision.window()).isEqualTo(TIER.windows().get(1));
        assertThat(decision.retryAfterSeconds()).isZero();
        assertThat(store.requests).isEmpty();
    }

    @Test
    @DisplayName(
            "a commit at the estimate, or of a tier without token windows, costs no store call; a cancel always does")
    void settlingOnlyWhatChanges() {
        RecordingStore store = new RecordingStore();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
        limiter.reserve("u", TIER, 300).commit(300).toCompletableFuture().join();
        Tier requestsOnly = Tier.of("r", Window.of(10, Duration.ofMinutes(1)));
        limiter.reserve("u", requestsOnly, 300).commit(10).toCompletableFuture().join();
        assertThat(store.settlements).isEmpty();
        Reservation cancelled = limiter.reserve("u", requestsOnly, 0);
        cancelled.cancel().toCompletableFuture().join();
        assertThat(store.settlements).hasSize(1);
        Settlement cancel = store.settlements.get(0);
        assertThat(cancel.isCancel()).isTrue();
        assertThat(cancel.reservedAtMillis())
                .as("the store's time of the reservation")
                .isEqualTo(42);
        assertThat(cancel.entryId()).isEqualTo(store.requests.get(2).entryId());
    }

    @Test
    @DisplayName("settling happens at most once: later commits and cancels send nothing (formerly kit rule X4)")
    void atMostOnce() {
        RecordingStore store = new RecordingStore();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
        Reservation reservation = limiter.reserve("u", TIER, 500);
        reservation.commit(100).toCompletableFuture().join();
        reservation.commit(50).toCompletableFuture().join();
        reservation.cancel().toCompletableFuture().join();
        assertThat(store.settlements).hasSize(1);
        assertThat(store.settlements.get(0).actualTokens()).isEqualTo(100);
        assertThat(reservation.isSettled()).isTrue();
    }

    @Test
    @DisplayName("settling a rejected reservation sends nothing (formerly kit rule X7)")
    void rejectedSettlesNothing() {
        List<Settlement> settled = new CopyOnWriteArrayList<>();
        WindowStore full = new TestStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                long[] used = new long[request.windows().size()];
                return Evaluation.rejected(1, 0, 1_000, used, new long[used.length]);
            }

            @Override
            public void settle(Settlement settlement) {
                settled.add(settlement);
            }
        };
        Reservation rejected = SlidingWindowRateLimiter.builder(full).build().reserve("u", TIER, 10);
        assertThat(rejected.decision().allowed()).isFalse();
        rejected.cancel().toCompletableFuture().join();
        rejected.commit(0).toCompletableFuture().join();
        assertThat(settled).isEmpty();
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}: in doubt {1}")
    @org.junit.jupiter.params.provider.CsvSource({
        "Command timed out after 500 millisecond(s), true",
        "Connection closed, true",
        "Connection reset by peer, true",
        "Unexpected end of stream., true",
        "Not connected; the store is opening a new connection, false",
        "ERR something the script refused, false"
    })
    @DisplayName("a reservation whose store call may have run (timed out, or the connection lost in flight) is"
            + " cancelled in doubt; one refused before it was sent is not")
    void reservationThatMayHaveRunIsCancelledInDoubt(String failure, boolean inDoubt) throws Exception {
        List<Settlement> settled = new CopyOnWriteArrayList<>();
        WindowStore failing = new TestStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                throw new dev.ratelimit.api.RateLimiterUnavailableException(
                        "Redis (Lettuce) is unavailable", new RuntimeException(failure));
            }

            @Override
            public void settle(Settlement settlement) {
                settled.add(settlement);
            }
        };
        RecordingMetrics metrics = new RecordingMetrics();
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(failing).metrics(metrics).build();
        Reservation reservation = limiter.reserve("u", TIER, 300);
        assertThat(reservation.decision().degraded()).isTrue();
        assertThat(metrics.count("settle.deferred in_doubt")).isEqualTo(inDoubt ? 1 : 0);
        assertThat(limiter.awaitSettlements(Duration.ofSeconds(10))).isTrue();
        assertThat(settled)
                .as("the cancel in doubt the store was sent")
                .hasSize(inDoubt ? 1 : 0)
                .allMatch(Settlement::isInDoubt);
    }

    @Test
    @DisplayName("a reservation whose command the driver cancelled (its connection closed with the command held"
            + " to be sent again) is cancelled in doubt: it may have run before the connection dropped")
    void cancelledCommandIsInDoubt() throws Exception {
        List<Settlement> settled = new CopyOnWriteArrayList<>();
        WindowStore failing = new TestStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                throw new dev.ratelimit.api.RateLimiterUnavailableException(
                        "Redis (Lettuce) is unavailable", new java.util.concurrent.CancellationException());
            }

            @Override
            public void settle(Settlement settlement) {
                settled.add(settlement);
            }
        };
        RateLimiter limiter = SlidingWindowRateLimiter.builder(failing).build();
        assertThat(limiter.reserve("u", TIER, 300).decision().degraded()).isTrue();
        assertThat(limiter.awaitSettlements(Duration.ofSeconds(10))).isTrue();
        assertThat(settled).hasSize(1).allMatch(Settlement::isInDoubt);
    }

    @Test
    @DisplayName("a settlement the store fails is queued and retried until the store takes it, applied once")
    void failedSettlementIsRetried() throws Exception {
        RecordingStore store = new RecordingStore();
        RecordingMetrics metrics = new RecordingMetrics();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .metrics(metrics)
                .failOpen(false)
                .build();
        Reservation reservation = limiter.reserve("u", TIER, 300);
        store.settleFails.set(true);
        reservation.commit(100).toCompletableFuture().join();
        assertThat(reservation.isSettled()).isTrue();
        assertThat(metrics.count("settle.deferred error")).isEqualTo(1);
        assertThat(metrics.state().pendingSettlements()).isEqualTo(1);
        assertThat(limiter.awaitSettlements(Duration.ofMillis(200)))
                .as("nothing applied while the store fails")
                .isFalse();
        assertThat(store.settlements).isEmpty();
        store.settleFails.set(false);
        assertThat(limiter.awaitSettlements(Duration.ofSeconds(10)))
                .as("applied once the store takes it")
                .isTrue();
        assertThat(store.settlements).hasSize(1);
        assertThat(store.settlements.get(0).actualTokens()).isEqualTo(100);
        assertThat(metrics.count("settle.retried")).isEqualTo(1);
        assertThat(metrics.state().pendingSettlements()).isZero();
        assertThat(metrics.count("settle.failure expired") + metrics.count("settle.failure queue_full"))
                .as("nothing given up")
                .isZero();
    }

    @Test
    @DisplayName("a settlement is given up, counted and logged, only once its reservation has left every window")
    void settlementGivenUpWhenNothingIsLeft() throws Exception {
        RecordingStore store = new RecordingStore();
        RecordingMetrics metrics = new RecordingMetrics();
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(store).metrics(metrics).build();
        Tier second = Tier.of("second", Window.of(10, Duration.ofSeconds(1)));
        Reservation reservation = limiter.reserve("u", second, 0);
        store.settleFails.set(true);
        reservation.cancel().toCompletableFuture().join();
        // real time is the point: the retry horizon of a 1 s window is 1 s of the JVM's clock
        assertThat(limiter.awaitSettlements(Duration.ofSeconds(10))).isTrue();
        assertThat(store.settlements).isEmpty();
        assertThat(metrics.count("settle.failure expired")).isEqualTo(1);
    }

    @Test
    @DisplayName("disabled, degraded and rejected reservations hold nothing: settling them calls no store")
    void nothingHeldNothingSettled() {
        RecordingStore store = new RecordingStore();
        RateLimiter disabled =
                SlidingWindowRateLimiter.builder(store).disabled(true).build();
        Reservation off = disabled.reserve("u", TIER, 300);
        assertThat(off.decision().allowed()).isTrue();
        off.cancel().toCompletableFuture().join();
        assertThat(store.requests).isEmpty();

        SlidingWindowRateLimiterTest.SwitchableStore down = new SlidingWindowRateLimiterTest.SwitchableStore();
        down.healthy.set(false);
        RateLimiter failingOpen = SlidingWindowRateLimiter.builder(down).build();
        Reservation degraded = failingOpen.reserve("u", TIER, 300);
        assertThat(degraded.decision().degraded()).isTrue();
        assertThat(degraded.decision().usage()).isEmpty();
        int calls = down.calls.get();
        degraded.commit(5_000).toCompletableFuture().join();
        assertThat(down.calls.get())
                .as("no store call to settle a degraded reservation")
                .isEqualTo(calls);
    }

    @Test
    @DisplayName(
            "a store that cannot reserve several scopes atomically gets them one by one, and a refusal cancels what came before")
    void stepwiseWhenNotAtomic() {
        List<StoreRequest> seen = new ArrayList<>();
        List<Settlement> settled = new ArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        WindowStore scopeByScope = new TestStore() {
            @Override
            public Evaluation evaluate(StoreRequest request) {
                assertThat(request.scopes()).hasSize(1);
                seen.add(request);
                long[] used = new long[request.windows().size()];
                if (calls.incrementAndGet() == 2) {
                    return Evaluation.rejected(7, 0, 1_500, used, new long[used.length]);
                }
                return Evaluation.allowed(7, used, new long[used.length]);
            }

            @Override
            public void settle(Settlement settlement) {
                settled.add(settlement);
            }

            @Override
            public boolean atomicAcrossScopes() {
                return false;
            }
        };
        RateLimiter limiter = SlidingWindowRateLimiter.builder(scopeByScope).build();
        SharedBudget upstream = SharedBudget.of("gpt", Window.tokens(10_000, Duration.ofMinutes(1)));
        Decision decision =
                limiter.reserve("alice", TIER, 300, List.of(upstream)).decision();
        assertThat(decision.allowed()).isFalse();
        assertThat(decision.budget()).isEqualTo("gpt");
        assertThat(decision.retryAfter()).isEqualTo(Duration.ofMillis(1_500));
        assertThat(seen)
                .extracting(request -> request.scopes().get(0).subject())
                .containsExactly("alice", "gpt");
        assertThat(seen.get(0).entryId()).isEqualTo(seen.get(1).entryId());
        assertThat(settled).hasSize(1);
        assertThat(settled.get(0).isCancel()).isTrue();
        assertThat(settled.get(0).scopes()).isEqualTo(seen.get(0).scopes());
    }
}
