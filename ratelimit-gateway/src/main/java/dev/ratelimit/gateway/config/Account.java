package dev.ratelimit.gateway.config;

import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.gateway.config.GatewayConfig.TierConfig;
import org.jspecify.annotations.Nullable;

/** The tenant and tier of an authenticated request. */
public record Account(
        String tenant,
        TierConfig tier,
        Spending.@Nullable Team team,
        @Nullable SharedBudget budget) {

    /** An account whose key has no windows of its own. */
    public Account(String tenant, TierConfig tier, Spending.@Nullable Team team) {
        this(tenant, tier, team, null);
    }
}
