package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Section X: settling reservations. A commit replaces the estimate by the tokens used (a refund
 * where the entry is still in the window, an overrun charged at the time of settling, never
 * rejected); a cancel gives back the request and its tokens; settling happens at most once, and a
 * store applies a repeated settlement of the same entry id once.
 */
interface SettlementRules extends ConformanceSection {

    Window REQUESTS = Window.of(10, MINUTE);
    Window TOKENS_MINUTE = Window.tokens(1_000, MINUTE);
    Window TOKENS_HOUR = Window.tokens(10_000, HOUR);

    /** 10 requests and 1,000 tokens per minute, 10,000 tokens per hour. */
    Tier TIER = Tier.of("x", REQUESTS, TOKENS_MINUTE, TOKENS_HOUR);

    @Test
    @DisplayName("X1 a commit below the estimate gives the difference back")
    default void refund() {
        String user = user("x1");
        Reservation reservation = limiter().reserve(user, TIER, 800);
        assertThat(reservation.decision().allowed()).as("[X1] 800 reserved").isTrue();
        clock().advance(Duration.ofSeconds(5));
        settled(reservation.commit(300));
        assertThat(reservation.isSettled()).as("[X1] settled after commit").isTrue();
        Decision next = limiter().reserve(user, TIER, 700).decision();
        assertThat(next.allowed())
                .as("[X1] 300 used + 700 fits the minute's 1,000")
                .isTrue();
        assertThat(used(next, TOKENS_MINUTE, null)).as("[X1] minute tokens").isEqualTo(1_000);
        assertThat(used(next, TOKENS_HOUR, null)).as("[X1] hour tokens").isEqualTo(1_000);
        assertThat(used(next, REQUESTS, null))
                .as("[X1] a commit keeps the request")
                .isEqualTo(2);
    }

    @Test
    @DisplayName(
            "X2 a commit above the estimate charges the overrun when settling, never rejected; later requests wait")
    default void overrun() {
        String user = user("x2");
        Reservation reservation = limiter().reserve(user, TIER, 500);
        clock().advance(Duration.ofSeconds(30));
        settled(reservation.commit(1_200));
        Decision rejected = limiter().reserve(user, TIER, 1).decision();
        assertThat(rejected.allowed()).as("[X2] 1,200 used of 1,000").isFalse();
        assertThat(used(rejected, TOKENS_MINUTE, null))
                .as("[X2] the overrun counts in full")
                .isEqualTo(1_200);
        assertThat(rejected.retryAfter())
                .as("[X2] 201 must leave: the estimate of 500 recorded at t0 leaves at t0 + 60 s, 30 s from now")
                .isEqualTo(Duration.ofSeconds(30));
        clock().advance(Duration.ofSeconds(30));
        assertThat(limiter().reserve(user, TIER, 300).decision().allowed())
                .as("[X2] at t0 + 60 s the overrun of 700 (charged at t0 + 30 s) remains: 300 fit")
                .isTrue();
        Decision stillWaiting = limiter().reserve(user, TIER, 1).decision();
        assertThat(stillWaiting.allowed()).as("[X2] and not one more").isFalse();
        assertThat(stillWaiting.retryAfter())
                .as("[X2] until the overrun leaves at t0 + 90 s")
                .isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    @DisplayName("X3 a cancel gives back the request and its tokens")
    default void cancel() {
        String user = user("x3");
        Reservation reservation = limiter().reserve(user, TIER, 600);
        clock().advance(Duration.ofSeconds(1));
        settled(reservation.cancel());
        Decision next = limiter().reserve(user, TIER, 1_000).decision();
        assertThat(next.allowed())
                .as("[X3] the whole token budget after the cancel")
                .isTrue();
        assertThat(used(next, REQUESTS, null))
                .as("[X3] the cancelled request is not counted")
                .isEqualTo(1);
        assertThat(used(next, TOKENS_HOUR, null))
                .as("[X3] nor its tokens in the hour")
                .isEqualTo(1_000);
    }

    @Test
    @DisplayName(
            "X5 settling after the window moved on changes nothing where the entry has left, and applies elsewhere")
    default void settleAfterTheWindowMoved() {
        String user = user("x5");
        Reservation refunded = limiter().reserve(user, TIER, 500);
        Reservation overrun = limiter().reserve(user, TIER, 100);
        clock().advance(Duration.ofSeconds(61));
        settled(refunded.commit(100));
        settled(overrun.commit(600));
        Decision next = limiter().reserve(user, TIER, 1).decision();
        assertThat(used(next, TOKENS_MINUTE, null))
                .as("[X5] minute: both estimates left; the overrun of 500 is charged now, plus 1")
                .isEqualTo(501);
        assertThat(used(next, TOKENS_HOUR, null))
                .as("[X5] hour: 500 refunded to 100, 100 overrun to 600, plus 1")
                .isEqualTo(701);
    }

    @Test
    @DisplayName("X6 a reservation never settled keeps its estimate")
    default void unsettledKeepsItsEstimate() {
        String user = user("x6");
        Reservation reservation = limiter().reserve(user, TIER, 700);
        clock().advance(Duration.ofSeconds(30));
        assertThat(reservation.isSettled()).as("[X6] not settled").isFalse();
        assertThat(limiter().reserve(user, TIER, 400).decision().allowed())
                .as("[X6] 700 + 400 > 1,000")
                .isFalse();
        assertThat(limiter().reserve(user, TIER, 300).decision().allowed())
                .as("[X6] 700 + 300 fits")
                .isTrue();
    }

    @Test
    @DisplayName("X9 the same settlement applied twice changes the store once, in exact and precision windows")
    @SuppressWarnings(
            "NullAway") // Settlement's lease is @Nullable: javac before 17.0.19 drops that from its class file
    default void repeatedSettlementIsApplied() {
        String user = user("x9");
        List<Window> windows = List.of(
                Window.tokens(10_000, MINUTE),
                Window.tokens(100_000, HOUR).withPrecision(MINUTE),
                Window.of("spend", 1_000_000, HOUR, Window.Unit.USD_MICROS),
                Window.of("spend-stepped", 10_000_000, DAY, Window.Unit.USD_MICROS)
                        .withPrecision(HOUR));
        Amounts estimate = Amounts.tokens(1_000).and(Window.Unit.USD_MICROS, 5_000);
        List<StoreRequest.Scope> scopes = List.of(StoreRequest.Scope.user(user, windows));
        StoreRequest refunded = new StoreRequest(scopes, estimate, clock().millis());
        StoreRequest overrun = new StoreRequest(scopes, estimate, clock().millis());
        long refundedAt = store().evaluate(refunded).nowMillis();
        long overrunAt = store().evaluate(overrun).nowMillis();
        clock().advance(Duration.ofSeconds(5));
        long now = clock().millis();
        Settlement refund = new Settlement(
                scopes,
                refunded.entryId(),
                refundedAt,
                estimate,
                Amounts.tokens(400).and(Window.Unit.USD_MICROS, 2_000),
                now,
                null);
        Settlement charge = new Settlement(
                scopes,
                overrun.entryId(),
                overrunAt,
                estimate,
                Amounts.tokens(1_500).and(Window.Unit.USD_MICROS, 7_500),
                now,
                null);
        for (int attempt = 1; attempt <= 3; attempt++) {
            store().settle(refund);
            store().settle(charge);
            Evaluation state = store().peek(new StoreRequest(scopes, 0, now));
            for (int i = 0; i < windows.size(); i++) {
                Window window = windows.get(i);
                assertThat(state.used(i))
                        .as(
                                "[X9] %s after each settlement was applied %d times: 400 + 1,500 tokens, 2,000 + 7,500"
                                        + " micro-dollars",
                                window, attempt)
                        .isEqualTo(window.isTokens() ? 1_900 : 9_500);
            }
        }
    }

    @Test
    @DisplayName("X10 a commit after a cancel of the same reservation changes nothing")
    @SuppressWarnings(
            "NullAway") // Settlement's lease is @Nullable: javac before 17.0.19 drops that from its class file
    default void commitAfterCancel() {
        String user = user("x10");
        List<Window> windows = List.of(
                Window.of(10, MINUTE),
                Window.tokens(10_000, MINUTE),
                Window.tokens(100_000, HOUR).withPrecision(MINUTE));
        List<StoreRequest.Scope> scopes = List.of(StoreRequest.Scope.user(user, windows));
        Amounts estimate = Amounts.tokens(1_000);
        StoreRequest request = new StoreRequest(scopes, estimate, clock().millis());
        long at = store().evaluate(request).nowMillis();
        clock().advance(Duration.ofSeconds(5));
        long now = clock().millis();
        store().settle(new Settlement(scopes, request.entryId(), at, estimate, null, now, null));
        store().settle(new Settlement(scopes, request.entryId(), at, estimate, Amounts.tokens(3_000), now, null));
        store().settle(new Settlement(scopes, request.entryId(), at, estimate, Amounts.tokens(200), now, null));
        Evaluation state = store().peek(new StoreRequest(scopes, 0, now));
        assertThat(state.used(0))
                .as("[X10] requests: the cancel gave the request back")
                .isZero();
        assertThat(state.used(1))
                .as("[X10] exact tokens: neither commit charged")
                .isZero();
        assertThat(state.used(2))
                .as("[X10] precision tokens: neither commit charged")
                .isZero();
    }

    @Test
    @DisplayName("X11 a cancel in doubt gives back a recorded reservation, in exact and precision windows, and"
            + " changes nothing for one never recorded")
    @SuppressWarnings(
            "NullAway") // Settlement's lease is @Nullable: javac before 17.0.19 drops that from its class file
    default void cancelInDoubt() {
        String user = user("x11");
        List<Window> windows = List.of(
                Window.of(10, MINUTE),
                Window.tokens(10_000, MINUTE),
                Window.tokens(100_000, HOUR).withPrecision(MINUTE),
                Window.of("spend-stepped", 10_000_000, DAY, Window.Unit.USD_MICROS)
                        .withPrecision(HOUR));
        List<StoreRequest.Scope> scopes = List.of(StoreRequest.Scope.user(user, windows));
        Amounts estimate = Amounts.tokens(1_000).and(Window.Unit.USD_MICROS, 5_000);
        StoreRequest kept = new StoreRequest(scopes, estimate, clock().millis());
        StoreRequest recorded = new StoreRequest(scopes, estimate, clock().millis());
        StoreRequest never = new StoreRequest(scopes, estimate, clock().millis());
        store().evaluate(kept);
        clock().advance(Duration.ofSeconds(1));
        store().evaluate(recorded);
        clock().advance(Duration.ofSeconds(5));
        long now = clock().millis();
        for (int attempt = 1; attempt <= 2; attempt++) {
            for (StoreRequest request : List.of(recorded, never)) {
                store().settle(new Settlement(
                        scopes, request.entryId(), Settlement.IN_DOUBT, estimate, null, now, null));
            }
            Evaluation state = store().peek(new StoreRequest(scopes, 0, now));
            assertThat(state.used(0))
                    .as("[X11] requests after %d attempts: the recorded one given back, the other kept", attempt)
                    .isEqualTo(1);
            assertThat(state.used(1)).as("[X11] exact tokens").isEqualTo(1_000);
            assertThat(state.used(2))
                    .as("[X11] precision tokens: the recorded reservation's step given back once")
                    .isEqualTo(1_000);
            assertThat(state.used(3))
                    .as("[X11] precision micro-dollars: nothing taken for the one never recorded")
                    .isEqualTo(5_000);
        }
    }

    @Test
    @DisplayName("X8 commits racing each other and new reservations leave exact sums")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void concurrentSettling() throws Exception {
        for (int trial = 0; trial < kit().concurrencyTrials(); trial++) {
            String user = user("x8-" + trial);
            List<Reservation> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(limiter().reserve(user, TIER, 300));
            }
            int committed = allowedOfRace(3, thread -> {
                settled(held.get(thread).commit(100));
                return true;
            });
            assertThat(committed).as("[X8] trial %d: commits", trial).isEqualTo(3);
            int allowed = allowedOfRace(
                    10, thread -> limiter().reserve(user, TIER, 100).decision().allowed());
            assertThat(allowed)
                    .as("[X8] trial %d: after 3 commits of 300 to 100, reservations of 100 admitted of 10", trial)
                    .isEqualTo(7);
        }
    }
}
