package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Section H: shadow windows. A window in shadow mode is counted exactly as if it were enforced and
 * never refuses: a request it would refuse is admitted, named among the decision's shadow refusals,
 * and not recorded in it, so its count, and so every later answer it gives, stays what its enforced
 * twin's would be. It keeps a log of its own, apart from an enforced window of the same shape.
 */
interface ShadowRules extends ConformanceSection {

    private static Window shadow(Window window) {
        return window.withMode(Window.Mode.SHADOW);
    }

    private static boolean refusedBy(Decision decision, Window window, @Nullable String budget) {
        return decision.shadowRefusals().stream()
                .anyMatch(refusal ->
                        refusal.window().equals(window) && java.util.Objects.equals(refusal.budget(), budget));
    }

    private long usedNow(String user, Tier tier, Window window) {
        return limiter().usage(user, tier).stream()
                .filter(usage -> usage.window().equals(window))
                .findFirst()
                .orElseThrow()
                .used();
    }

    @Test
    @DisplayName("H1 a shadow window admits every request its enforcing twin refuses, names it each time, and the"
            + " two agree on every request of a run across the window's length")
    default void shadowMatchesItsEnforcingTwin() {
        Window enforced = Window.of(3, MINUTE);
        Window shadowed = shadow(enforced);
        String twin = user("h1-enforced");
        String watched = user("h1-shadow");
        int refusals = 0;
        int shadowRefusals = 0;
        for (int i = 0; i < 40; i++) {
            Decision hard = limiter().check(twin, List.of(enforced));
            Decision soft = limiter().check(watched, List.of(shadowed));
            assertThat(soft.allowed())
                    .as("[H1] request %d: the shadow window refuses nothing", i)
                    .isTrue();
            assertThat(refusedBy(soft, shadowed, null))
                    .as("[H1] request %d: named as a shadow refusal exactly when the twin refused", i)
                    .isEqualTo(!hard.allowed());
            assertThat(soft.usage()).as("[H1] a shadow window is not in usage").isEmpty();
            refusals += hard.allowed() ? 0 : 1;
            shadowRefusals += soft.shadowRefusals().size();
            clock().advance(Duration.ofSeconds(7));
        }
        assertThat(shadowRefusals).as("[H1] shadow refusals over the run").isEqualTo(refusals);
        assertThat(refusals).as("[H1] the run refused some and admitted some").isBetween(1, 39);
        assertThat(usedNow(watched, Tier.of("h1", shadowed), shadowed))
                .as("[H1] the shadow window holds what its twin holds")
                .isEqualTo(limiter().usage(twin, Tier.of("h1", enforced)).get(0).used());
    }

    @Test
    @DisplayName("H2 a shadow window and an enforced one of the same length and unit keep separate logs; the"
            + " enforced one decides, the shadow one is not charged with what it would refuse")
    default void separateLogFromEnforcedTwin() {
        Window enforced = new Window("minute", 5, MINUTE);
        Window shadowed = shadow(new Window("minute-trial", 2, MINUTE));
        Tier tier = Tier.of("h2", enforced, shadowed);
        String user = user("h2");
        for (int i = 0; i < 5; i++) {
            Decision decision = limiter().check(user, tier);
            assertThat(decision.allowed())
                    .as("[H2] request %d of the enforced 5", i + 1)
                    .isTrue();
            assertThat(decision.window()).as("[H2] the enforced window decides").isEqualTo(enforced);
            assertThat(decision.remaining())
                    .as("[H2] remaining counts the enforced window")
                    .isEqualTo(4 - i);
            assertThat(refusedBy(decision, shadowed, null))
                    .as("[H2] request %d: the shadow limit of 2 would refuse from the third", i + 1)
                    .isEqualTo(i >= 2);
        }
        assertThat(limiter().check(user, tier).allowed())
                .as("[H2] the enforced window refuses the sixth")
                .isFalse();
        assertThat(usedNow(user, tier, enforced))
                .as("[H2] the enforced window holds 5")
                .isEqualTo(5);
        assertThat(usedNow(user, tier, shadowed))
                .as("[H2] the shadow window holds the 2 it admitted, not the 3 it would refuse")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("H3 a request an enforced window refuses records nothing in the shadow windows, and names no"
            + " shadow refusal")
    default void enforcedRefusalRecordsNoShadow() {
        Window enforced = new Window("minute", 2, MINUTE);
        Window shadowed = shadow(new Window("hour", 10, Duration.ofHours(1)));
        Tier tier = Tier.of("h3", enforced, shadowed);
        String user = user("h3");
        for (int i = 0; i < 5; i++) {
            Decision decision = limiter().check(user, tier);
            assertThat(decision.allowed()).as("[H3] request %d", i + 1).isEqualTo(i < 2);
            assertThat(decision.shadowRefusals()).as("[H3] request %d", i + 1).isEmpty();
        }
        assertThat(usedNow(user, tier, shadowed))
                .as("[H3] the shadow window holds the 2 admitted")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("H4 a reservation's shadow windows settle with it: a commit charges them what was used, a cancel"
            + " gives it back, and a request too large for a shadow window is admitted, named, and recorded"
            + " in no shadow window")
    default void shadowSettlesWithReservation() {
        Window requests = new Window("rpm", 100, MINUTE);
        Window tokens = shadow(Window.tokens("tpm", 1_000, MINUTE));
        Window hourly = shadow(Window.tokens("tph", 5_000, Duration.ofHours(1)));
        Tier tier = Tier.of("h4", requests, tokens, hourly);
        String user = user("h4");
        Reservation committed = limiter().reserve(user, tier, Amounts.tokens(400), List.of());
        assertThat(committed.decision().shadowRefusals())
                .as("[H4] 400 of 1,000 fits")
                .isEmpty();
        assertThat(usedNow(user, tier, tokens)).as("[H4] reserved").isEqualTo(400);
        settled(committed.commit(Amounts.tokens(150)));
        assertThat(usedNow(user, tier, tokens))
                .as("[H4] settled to what was used")
                .isEqualTo(150);
        assertThat(usedNow(user, tier, hourly)).as("[H4] the hour too").isEqualTo(150);
        Reservation cancelled = limiter().reserve(user, tier, Amounts.tokens(300), List.of());
        settled(cancelled.cancel());
        assertThat(usedNow(user, tier, tokens))
                .as("[H4] a cancel gives it back")
                .isEqualTo(150);
        Reservation huge = limiter().reserve(user, tier, Amounts.tokens(2_000), List.of());
        assertThat(huge.decision().allowed())
                .as("[H4] too large only for shadow windows")
                .isTrue();
        assertThat(huge.decision().shadowRefusals())
                .as("[H4] the minute's shadow window would refuse it for good")
                .containsExactly(new Decision.ShadowRefusal(tokens, null, true));
        assertThat(usedNow(user, tier, tokens))
                .as("[H4] nothing recorded in the minute")
                .isEqualTo(150);
        assertThat(usedNow(user, tier, hourly))
                .as("[H4] nor in the hour, as an enforced refusal records nothing anywhere")
                .isEqualTo(150);
        assertThat(usedNow(user, tier, requests))
                .as("[H4] the enforced window counts it (the cancelled request was given back)")
                .isEqualTo(2);
        settled(huge.commit(Amounts.tokens(2_000)));
        assertThat(usedNow(user, tier, tokens))
                .as("[H4] its settlement charges no shadow window")
                .isEqualTo(150);
    }

    @Test
    @DisplayName("H5 a shared budget's shadow window names the budget when it would refuse, and a tier of shadow"
            + " windows only is answered on the enforced budget")
    default void sharedShadowWindow() {
        SharedBudget upstream = new SharedBudget(
                user("h5-upstream"),
                List.of(new Window("rpm", 100, MINUTE), shadow(new Window("rpm-trial", 2, MINUTE))));
        Window shadowed = shadow(Window.of(50, MINUTE));
        Tier tier = Tier.of("h5", shadowed);
        Window capWindow = upstream.windows().get(1);
        for (int i = 0; i < 4; i++) {
            Reservation reservation = limiter().reserve(user("h5-" + i), tier, Amounts.none(), List.of(upstream));
            Decision decision = reservation.decision();
            assertThat(decision.allowed()).as("[H5] request %d", i + 1).isTrue();
            assertThat(refusedBy(decision, capWindow, upstream.name()))
                    .as("[H5] request %d: the budget's shadow limit of 2 would refuse from the third", i + 1)
                    .isEqualTo(i >= 2);
            assertThat(decision.window())
                    .as("[H5] with no enforced window of the user's, the shortest shadow one is named")
                    .isEqualTo(shadowed);
            assertThat(decision.remaining()).as("[H5] its whole limit").isEqualTo(50);
        }
        assertThat(limiter().usage(upstream).get(0).used())
                .as("[H5] the enforced budget window counts all 4")
                .isEqualTo(4);
        assertThat(limiter().usage(upstream).get(1).used())
                .as("[H5] the shadow one the 2 it admitted")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("H6 the asynchronous calls give shadow windows the same meaning: checkAsync and reserveAsync"
            + " admit, name and count as the blocking calls do")
    default void asynchronousCallsAgree() {
        Window enforced = new Window("minute", 5, MINUTE);
        Window shadowed = shadow(new Window("minute-trial", 2, MINUTE));
        Tier tier = Tier.of("h6", enforced, shadowed);
        SharedBudget budget = new SharedBudget(
                user("h6-budget"), List.of(new Window("rpm", 100, MINUTE), shadow(new Window("rpm-trial", 3, MINUTE))));
        String user = user("h6");
        for (int i = 0; i < 5; i++) {
            Decision decision =
                    limiter().checkAsync(user, tier).toCompletableFuture().join();
            assertThat(decision.allowed()).as("[H6] checkAsync %d", i + 1).isTrue();
            assertThat(refusedBy(decision, shadowed, null))
                    .as("[H6] checkAsync %d: the shadow 2 would refuse from the third", i + 1)
                    .isEqualTo(i >= 2);
        }
        assertThat(limiter().checkAsync(user, tier).toCompletableFuture().join().allowed())
                .as("[H6] the enforced 5 refuse the sixth")
                .isFalse();
        assertThat(usedNow(user, tier, shadowed))
                .as("[H6] the shadow window holds 2")
                .isEqualTo(2);
        String other = user("h6-reserve");
        for (int i = 0; i < 4; i++) {
            Reservation reservation = limiter()
                    .reserveAsync(other, Tier.of("h6r", enforced), Amounts.none(), List.of(budget))
                    .toCompletableFuture()
                    .join();
            assertThat(reservation.decision().allowed())
                    .as("[H6] reserveAsync %d", i + 1)
                    .isTrue();
            assertThat(refusedBy(reservation.decision(), budget.windows().get(1), budget.name()))
                    .as("[H6] reserveAsync %d: the budget's shadow 3 would refuse the fourth", i + 1)
                    .isEqualTo(i >= 3);
            settled(reservation.commit(Amounts.none()));
        }
        assertThat(limiter().usage(budget).get(1).used())
                .as("[H6] the budget's shadow window holds the 3 it admitted")
                .isEqualTo(3);
    }
}
