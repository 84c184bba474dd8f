package dev.ratelimit.spring.boot.actuate;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code ratelimit} actuator endpoint: the tiers ({@code GET /actuator/ratelimit}) and one
 * caller's current usage of each window of a tier ({@code GET /actuator/ratelimit/{user}?tier=pro},
 * the default tier without {@code tier}). A caller is named by its budget key: the authenticated
 * name, or {@code ip:<address>} for anonymous callers. Like every actuator endpoint other than
 * health, it is not exposed over HTTP until {@code management.endpoints.web.exposure.include} names
 * it, and the application's security rules for actuator endpoints apply.
 */
@Endpoint(id = "ratelimit")
public class RateLimitEndpoint {

    private final RateLimiter limiter;
    private final TierPolicy policy;

    /**
     * Creates the endpoint.
     *
     * @param limiter the limiter
     * @param policy the tiers
     */
    public RateLimitEndpoint(RateLimiter limiter, TierPolicy policy) {
        this.limiter = limiter;
        this.policy = policy;
    }

    /**
     * Returns the tiers and their windows.
     *
     * @return the policy
     */
    @ReadOperation
    public Policy tiers() {
        Map<String, List<WindowReport>> tiers = new LinkedHashMap<>();
        policy.tiers()
                .forEach((name, tier) -> tiers.put(
                        name, tier.windows().stream().map(WindowReport::of).toList()));
        return new Policy(policy.defaultTier().name(), tiers);
    }

    /**
     * Returns a caller's usage of each window of a tier.
     *
     * @param user the caller's budget key
     * @param tier the tier's name; {@code null}: the default tier
     * @return the usage, shortest window first
     * @throws IllegalArgumentException if the tier is unknown
     */
    @ReadOperation
    public UserUsage usage(@Selector String user, @Nullable String tier) {
        Tier chosen = tier == null ? policy.defaultTier() : policy.tiers().get(tier);
        if (chosen == null) {
            throw new IllegalArgumentException("tier '" + tier + "' is not one of the tiers "
                    + policy.tiers().keySet());
        }
        List<WindowUsage> windows = new ArrayList<>();
        for (Decision.Usage usage : limiter.usage(user, chosen)) {
            windows.add(new WindowUsage(
                    usage.window().name(),
                    usage.window().unit().name(),
                    usage.window().limit(),
                    usage.used(),
                    usage.remaining(),
                    usage.resetAfter().toMillis()));
        }
        return new UserUsage(user, chosen.name(), windows);
    }

    /**
     * The tiers.
     *
     * @param defaultTier the default tier's name
     * @param tiers each tier's windows
     */
    public record Policy(String defaultTier, Map<String, List<WindowReport>> tiers) {}

    /**
     * One window of a tier.
     *
     * @param name its name
     * @param unit {@code requests} or {@code tokens}
     * @param limit its limit
     * @param lengthSeconds its length
     */
    public record WindowReport(String name, String unit, long limit, long lengthSeconds) {
        static WindowReport of(Window window) {
            return new WindowReport(window.name(), window.unit().name(), window.limit(), window.lengthSeconds());
        }
    }

    /**
     * A caller's usage of a tier; no windows while the kill switch is on.
     *
     * @param user the caller's budget key
     * @param tier the tier's name
     * @param windows each window's usage, shortest first
     */
    public record UserUsage(String user, String tier, List<WindowUsage> windows) {}

    /**
     * One window's usage.
     *
     * @param window its name
     * @param unit {@code requests} or {@code tokens}
     * @param limit its limit
     * @param used what the window holds now
     * @param remaining what is left
     * @param resetAfterMillis when the oldest entry leaves
     */
    public record WindowUsage(
            String window, String unit, long limit, long used, long remaining, long resetAfterMillis) {}
}
