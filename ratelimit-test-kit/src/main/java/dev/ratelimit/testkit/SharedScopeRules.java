package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Section G: budgets shared by many users, charged in the same atomic step (optional). */
interface SharedScopeRules extends ConformanceSection {

    /** Each user's own window. */
    Window USER_MINUTE = new Window("minute", 5, MINUTE);

    /** The window all users share. */
    Window SHARED_MINUTE = new Window("minute", 3, MINUTE);

    private StoreRequest request(String user, String shared) {
        return new StoreRequest(
                List.of(
                        new StoreRequest.Scope(user, List.of(USER_MINUTE)),
                        new StoreRequest.Scope(shared, List.of(SHARED_MINUTE))),
                1,
                clock().millis());
    }

    @Test
    @DisplayName("G0 a store without shared scopes refuses them instead of evaluating piecewise")
    default void refusedWhenUnsupported() {
        assumeTrue(!kit().supportsSharedScopes(), "[G0] the store supports shared scopes: G1 and G2 apply");
        assertThatThrownBy(() -> store().evaluate(request(user("g0"), user("g0-shared"))))
                .as("[G0] a request with a shared scope, to a store that does not declare them")
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    @DisplayName("G1 a shared budget caps all its users, and its rejection charges nobody")
    default void sharedBudgetCaps() {
        assumeTrue(kit().supportsSharedScopes(), "[G1] the store does not declare shared scopes");
        String shared = user("g1-upstream");
        String alice = user("g1-alice");
        String bob = user("g1-bob");
        for (int i = 0; i < 2; i++) {
            assertThat(store().evaluate(request(alice, shared)).isAllowed())
                    .as("[G1] alice's check %d: 5/minute her own, 3/minute shared", i + 1)
                    .isTrue();
        }
        Evaluation bobFirst = store().evaluate(request(bob, shared));
        assertThat(bobFirst.isAllowed())
                .as("[G1] bob's first check takes the shared budget's last slot")
                .isTrue();
        assertThat(bobFirst.used(1))
                .as("[G1] the shared window counts every user")
                .isEqualTo(3);
        Evaluation rejected = store().evaluate(request(bob, shared));
        assertThat(rejected.isAllowed())
                .as("[G1] the shared budget of 3 is used up")
                .isFalse();
        assertThat(rejected.rejectedIndex())
                .as("[G1] rejected by the shared window")
                .isEqualTo(1);
        Evaluation bobAlone = store().evaluate(new StoreRequest(bob, List.of(USER_MINUTE), 1, clock().millis()));
        assertThat(bobAlone.used(0))
                .as("[G1] bob's own window holds only his allowed request")
                .isEqualTo(2);
    }

    @Test
    @DisplayName("G2 shared budgets stay exact under contention")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    default void sharedUnderContention() throws Exception {
        assumeTrue(kit().supportsSharedScopes(), "[G2] the store does not declare shared scopes");
        String shared = user("g2-upstream");
        int allowed = allowedOfRace(
                30,
                thread -> store().evaluate(request(user("g2-user-" + (thread % 10)), shared))
                        .isAllowed());
        assertThat(allowed)
                .as("[G2] allowed of 30 simultaneous checks, shared limit 3")
                .isEqualTo(3);
    }
}
