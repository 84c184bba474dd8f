package dev.ratelimit.spring.boot.actuate;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.TierPolicy;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The limiter's health: whether its store answers a cheap read ({@link RateLimiter#usage} of a probe
 * user: one store call, nothing counted; none at all while the circuit breaker is open) and the
 * breaker's state. It is {@code DOWN} only when the store fails and the limiter fails closed (requests
 * get 503); failing open, it stays {@code UP} with {@code store: unreachable} and {@code degraded:
 * true}, because requests are still served, unlimited. Alert on the {@code ratelimit.store.unavailable}
 * gauge for both.
 */
final class RateLimitHealthIndicator implements HealthIndicator {

    /** The user whose usage is read to probe the store. */
    private static final String PROBE_USER = "ratelimit-health-probe";

    private final RateLimiter limiter;
    private final TierPolicy policy;
    private final String name;
    private final boolean failOpen;
    private final @Nullable String storeType;
    private final @Nullable MeterRegistry registry;

    /**
     * Creates the indicator.
     *
     * @param limiter the limiter
     * @param policy the tiers; the default tier's windows are read
     * @param name the limiter's name ({@code ratelimit.name})
     * @param failOpen whether the limiter fails open
     * @param storeType the auto-configured store's type, or {@code null}
     * @param registry the registry the limiter publishes its breaker's state to, or {@code null}
     */
    RateLimitHealthIndicator(
            RateLimiter limiter,
            TierPolicy policy,
            String name,
            boolean failOpen,
            @Nullable String storeType,
            @Nullable MeterRegistry registry) {
        this.limiter = limiter;
        this.policy = policy;
        this.name = name;
        this.failOpen = failOpen;
        this.storeType = storeType;
        this.registry = registry;
    }

    @Override
    public Health health() {
        Health.Builder health;
        try {
            List<Decision.Usage> usage = limiter.usage(PROBE_USER, policy.defaultTier());
            health = Health.up().withDetail("store", "reachable");
            if (usage.isEmpty()) {
                // a tier has at least one window: none read means the kill switch is on
                health.withDetail("disabled", true);
            }
        } catch (RateLimiterUnavailableException e) {
            health = failOpen ? Health.up().withDetail("degraded", true) : Health.down();
            health.withDetail("store", "unreachable").withDetail("error", String.valueOf(e.getMessage()));
        }
        health.withDetail("limiter", name).withDetail("failOpen", failOpen);
        if (storeType != null) {
            health.withDetail("storeType", storeType);
        }
        String breaker = breakerState();
        if (breaker != null) {
            health.withDetail("circuitBreaker", breaker);
        }
        return health.build();
    }

    private @Nullable String breakerState() {
        MeterRegistry meters = registry;
        if (meters == null) {
            return null;
        }
        for (Gauge gauge : meters.find("resilience4j.circuitbreaker.state")
                .tag("name", "ratelimit-" + name)
                .gauges()) {
            if (gauge.value() == 1) {
                return gauge.getId().getTag("state");
            }
        }
        return null;
    }
}
