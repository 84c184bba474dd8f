package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.CallerKeys;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.web.internal.PathPatterns;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * The WebFlux filter with {@link RateLimitFilter}'s contract: one {@link
 * RateLimiter#checkAsync(String, Tier)} per request, the same headers, 429 and 503 bodies, exempt
 * paths and methods, and shadow mode; the allowed request's {@link Decision} is left in the exchange
 * attribute {@value RateLimitFilter#DECISION_ATTRIBUTE}.
 *
 * <p>It never blocks the thread it runs on: the check is asynchronous, and a store whose
 * asynchronous checks block (Jedis, or any store the application defines) is called on Reactor's
 * bounded-elastic scheduler instead of the event loop. Usable in Spring Cloud Gateway, which runs
 * on WebFlux.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

    private final ReactiveLimiting limiting;
    private final PathPatterns paths;
    private final PathPatterns exclusions;
    private final Set<String> exemptMethods;
    private final int order;

    /**
     * Creates the filter.
     *
     * @param limiter the limiter
     * @param policy the tiers
     * @param identities finds the caller
     * @param properties the settings: paths, exclusions, exempt methods, shadow mode, headers, order
     * @param offload whether to call the limiter off the event loop (its store blocks)
     */
    public RateLimitWebFilter(
            RateLimiter limiter,
            TierPolicy policy,
            ReactiveIdentityResolver identities,
            RateLimitProperties properties,
            boolean offload) {
        this.limiting = new ReactiveLimiting(limiter, policy, identities, properties, offload);
        this.paths = PathPatterns.of(properties.getPaths(), "ratelimit.paths");
        this.exclusions = PathPatterns.of(properties.getExcludePaths(), "ratelimit.exclude-paths");
        this.exemptMethods = properties.getExemptMethods().stream()
                .map(method -> method.trim().toUpperCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
        this.order = properties.getFilter().getOrder();
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        String path = request.getPath().pathWithinApplication().value();
        if (path.isEmpty()) {
            path = "/";
        }
        if (exchange.getAttribute(RateLimitFilter.DECISION_ATTRIBUTE) != null
                || exemptMethods.contains(request.getMethod().name())
                || !paths.matches(path)
                || exclusions.matches(path)) {
            return chain.filter(exchange);
        }
        return limiting.caller(exchange).flatMap(caller -> {
            CallerKeys.Subject subject = limiting.subject(exchange, caller);
            Tier tier = subject.tier();
            return limiting.check(subject.key(), tier)
                    .flatMap(decision -> decision.isPresent()
                            ? decided(exchange, chain, tier, decision.get())
                            : limiting.unavailable(exchange, tier));
        });
    }

    private Mono<Void> decided(ServerWebExchange exchange, WebFilterChain chain, Tier tier, Decision decision) {
        exchange.getAttributes().put(RateLimitFilter.DECISION_ATTRIBUTE, decision);
        if (decision.allowed()) {
            limiting.allowed(exchange, tier, decision);
            return chain.filter(exchange);
        }
        if (!limiting.enforce()) {
            return chain.filter(exchange);
        }
        return limiting.rejected(exchange, tier, decision);
    }

    @Override
    public String toString() {
        return "RateLimitWebFilter{" + limiting + "}";
    }
}
