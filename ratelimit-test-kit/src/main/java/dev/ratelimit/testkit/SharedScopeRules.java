package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Section G: budgets shared by many users (an upstream provider's caps), charged in the same
 * reservation as the user's windows, all or nothing both ways.
 */
interface SharedScopeRules extends ConformanceSection {

    Window USER_MINUTE = Window.of(5, MINUTE);
    Window SHARED_MINUTE = Window.of(3, MINUTE);

    @Test
    @DisplayName(
            "G0 a store that cannot evaluate several scopes atomically refuses them instead of evaluating piecewise")
    default void refusedWhenNotAtomic() {
        assumeFalse(
                store().atomicAcrossScopes(),
                "[G0] the store evaluates several scopes atomically: the limiter sends them in one request");
        StoreRequest request = new StoreRequest(
                List.of(
                        StoreRequest.Scope.user(user("g0"), List.of(USER_MINUTE)),
                        StoreRequest.Scope.shared(user("g0-shared"), List.of(SHARED_MINUTE))),
                0,
                clock().millis());
        assertThatThrownBy(() -> store().evaluate(request))
                .as("[G0] a request of two scopes to a store that says it cannot evaluate them atomically")
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    @DisplayName("G1 a shared budget caps all its users, and a request it rejects costs the user nothing")
    default void sharedBudgetCaps() {
        SharedBudget upstream = SharedBudget.of(user("g1-upstream"), SHARED_MINUTE);
        Tier tier = Tier.of("g1", USER_MINUTE);
        String alice = user("g1-alice");
        String bob = user("g1-bob");
        for (int i = 0; i < 2; i++) {
            assertThat(reserve(alice, tier, upstream).allowed())
                    .as("[G1] alice's reservation %d: 5/minute her own, 3/minute shared", i + 1)
                    .isTrue();
        }
        Decision last = reserve(bob, tier, upstream);
        assertThat(last.allowed())
                .as("[G1] bob takes the shared budget's last slot")
                .isTrue();
        assertThat(used(last, SHARED_MINUTE, upstream.name()))
                .as("[G1] the shared window counts every user")
                .isEqualTo(3);
        Decision rejected = reserve(bob, tier, upstream);
        assertThat(rejected.allowed())
                .as("[G1] the shared budget of 3 is used up")
                .isFalse();
        assertThat(rejected.budget())
                .as("[G1] the decision names the shared budget")
                .isEqualTo(upstream.name());
        assertThat(rejected.window()).as("[G1] and its window").isEqualTo(SHARED_MINUTE);
        Decision bobAlone = limiter().check(bob, tier);
        assertThat(used(bobAlone, USER_MINUTE, null))
                .as("[G1] bob's own window holds his allowed request and this check, not the rejected one")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("G2 a request the user's own window rejects costs the shared budget nothing")
    default void userRejectionCostsTheSharedNothing() {
        SharedBudget upstream = SharedBudget.of(user("g2-upstream"), Window.of(10, MINUTE));
        Tier tier = Tier.of("g2", Window.of(1, MINUTE));
        String alice = user("g2-alice");
        assertThat(reserve(alice, tier, upstream).allowed())
                .as("[G2] alice's one request")
                .isTrue();
        Decision rejected = reserve(alice, tier, upstream);
        assertThat(rejected.allowed()).as("[G2] alice's second").isFalse();
        assertThat(rejected.budget()).as("[G2] rejected by her own window").isNull();
        Decision bob = reserve(user("g2-bob"), tier, upstream);
        assertThat(used(bob, upstream.windows().get(0), upstream.name()))
                .as("[G2] the shared window counts alice's allowed request and bob's, not the rejected one")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("G3 shared budgets stay exact under contention, rejecting both ways")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void sharedUnderContention() throws Exception {
        SharedBudget tight = SharedBudget.of(user("g3-tight"), SHARED_MINUTE);
        Tier roomy = Tier.of("g3", USER_MINUTE);
        int allowed = allowedOfRace(
                30,
                thread -> reserve(user("g3-a-" + (thread % 10)), roomy, tight).allowed());
        assertThat(allowed)
                .as("[G3] admitted of 30 across 10 users, shared limit 3")
                .isEqualTo(3);
        int userTotal = 0;
        for (int u = 0; u < 10; u++) {
            userTotal += used(limiter().check(user("g3-a-" + u), roomy), USER_MINUTE, null) - 1;
        }
        assertThat(userTotal)
                .as("[G3] users' windows hold exactly the 3 admitted")
                .isEqualTo(3);

        SharedBudget roomyShared = SharedBudget.of(user("g3-roomy"), Window.of(100, MINUTE));
        Tier tight1 = Tier.of("g3b", Window.of(1, MINUTE));
        int allowedPerUser = allowedOfRace(
                30,
                thread -> reserve(user("g3-b-" + (thread % 10)), tight1, roomyShared)
                        .allowed());
        assertThat(allowedPerUser)
                .as("[G3] admitted of 30 across 10 users of limit 1")
                .isEqualTo(10);
        Decision probe = reserve(user("g3-b-probe"), tight1, roomyShared);
        assertThat(used(probe, roomyShared.windows().get(0), roomyShared.name()))
                .as("[G3] the shared window holds exactly the 10 admitted and this probe")
                .isEqualTo(11);
    }

    @Test
    @DisplayName("G4 settling applies to shared budgets too")
    default void settlingShared() {
        Window tokens = Window.tokens(1_000, MINUTE);
        SharedBudget upstream = SharedBudget.of(user("g4-upstream"), tokens);
        Tier tier = Tier.of("g4", Window.tokens(5_000, MINUTE));
        Reservation first = limiter().reserve(user("g4-alice"), tier, 800, List.of(upstream));
        assertThat(first.decision().allowed())
                .as("[G4] 800 of the shared 1,000")
                .isTrue();
        assertThat(limiter()
                        .reserve(user("g4-bob"), tier, 800, List.of(upstream))
                        .decision()
                        .allowed())
                .as("[G4] 800 + 800 > 1,000")
                .isFalse();
        settled(first.commit(200));
        Decision bob =
                limiter().reserve(user("g4-bob"), tier, 800, List.of(upstream)).decision();
        assertThat(bob.allowed()).as("[G4] after alice's commit of 200").isTrue();
        assertThat(used(bob, tokens, upstream.name())).as("[G4] shared tokens").isEqualTo(1_000);
    }

    @Test
    @DisplayName("G5 a user and a shared budget of the same name never share counts")
    default void namesDoNotCollide() {
        String name = user("g5-same");
        SharedBudget shared = SharedBudget.of(name, Window.of(1, MINUTE));
        Tier tier = Tier.of("g5", Window.of(1, MINUTE));
        assertThat(limiter().check(name, tier).allowed())
                .as("[G5] the user's only request")
                .isTrue();
        Decision viaShared = reserve(user("g5-other"), tier, shared);
        assertThat(viaShared.allowed())
                .as("[G5] the shared budget of the same name is untouched")
                .isTrue();
    }

    @Test
    @DisplayName("G6 a request a shared budget rejects costs the user's precision windows nothing")
    default void sharedRejectionCostsPrecisionNothing() {
        Window requests = Window.of(100, DAY).withPrecision(MINUTE);
        Window tokens = Window.tokens(10_000, DAY).withPrecision(MINUTE);
        Tier tier = Tier.of("g6", requests, tokens);
        SharedBudget upstream = SharedBudget.of(user("g6-upstream"), Window.of(1, MINUTE));
        String alice = user("g6-alice");
        assertThat(limiter()
                        .reserve(alice, tier, 300, List.of(upstream))
                        .decision()
                        .allowed())
                .as("[G6] alice's first request: 300 tokens")
                .isTrue();
        Decision rejected =
                limiter().reserve(alice, tier, 200, List.of(upstream)).decision();
        assertThat(rejected.allowed())
                .as("[G6] the shared budget of 1 is used up")
                .isFalse();
        assertThat(rejected.budget()).as("[G6] rejected by the shared budget").isEqualTo(upstream.name());
        if (store().atomicAcrossScopes()) {
            // (scope by scope, her windows answered before the budget rejected and her part was cancelled)
            assertThat(used(rejected, requests, null))
                    .as("[G6] the rejection reports alice's requests without the rejected one")
                    .isEqualTo(1);
            assertThat(used(rejected, tokens, null))
                    .as("[G6] and her tokens without its 200")
                    .isEqualTo(300);
        }
        SharedBudget roomy = SharedBudget.of(user("g6-roomy"), Window.of(10, MINUTE));
        Decision next = limiter().reserve(alice, tier, 50, List.of(roomy)).decision();
        assertThat(next.allowed())
                .as("[G6] alice through a roomy budget, in the same step")
                .isTrue();
        assertThat(used(next, requests, null))
                .as("[G6] her precision windows hold the first request and this one, not the rejected one")
                .isEqualTo(2);
        assertThat(used(next, tokens, null)).as("[G6] 300 + 50 tokens").isEqualTo(350);
    }

    private Decision reserve(String user, Tier tier, SharedBudget shared) {
        return limiter().reserve(user, tier, 0, List.of(shared)).decision();
    }
}
