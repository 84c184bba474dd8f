package dev.ratelimit.http;

import dev.ratelimit.api.Tier;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiConsumer;

/**
 * {@link HeaderFamily#IETF}: {@code RateLimit-Policy} lists the tier's windows (shadow windows left
 * out), {@code RateLimit} an item per reported window.
 */
final class IetfHeaders implements FamilyHeaders {

    /** Tiers are few; a caller building one per request must not grow the cache past this. */
    private static final int MAX_CACHED_POLICIES = 1_024;

    private final ConcurrentMap<Tier, String> policies = new ConcurrentHashMap<>();

    @Override
    public void policy(Tier tier, BiConsumer<String, String> headers) {
        String policy = policies.get(tier);
        if (policy == null) {
            policy = HeaderValues.policy(
                    tier.windows().stream().filter(window -> !window.inShadow()).toList());
            if (policies.size() < MAX_CACHED_POLICIES) {
                policies.putIfAbsent(tier, policy);
            }
        }
        if (!policy.isEmpty()) {
            headers.accept(RateLimitResponses.RATE_LIMIT_POLICY, policy);
        }
    }

    @Override
    public void counts(List<ReportedWindow> reported, BiConsumer<String, String> headers) {
        StringBuilder items = new StringBuilder();
        for (ReportedWindow window : reported) {
            if (items.length() > 0) {
                items.append(", ");
            }
            items.append(HeaderValues.rateLimitItem(window.name(), window.remaining(), window.resetSeconds()));
        }
        headers.accept(RateLimitResponses.RATE_LIMIT, items.toString());
    }
}
