package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.CallerKeys;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.RateLimited;
import dev.ratelimit.spring.boot.web.internal.RateLimitedSupport;
import java.util.Map;
import java.util.Optional;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Applies {@link RateLimited} on WebFlux handler methods: finds the request's handler through the
 * {@link RequestMappingHandlerMapping}, and when it is annotated makes one non-blocking check of the
 * method's own budget; a rejection is answered 429 (503 while a fail-closed limiter cannot reach its
 * store) with the filter's headers and body.
 */
public final class RateLimitedWebFilter implements WebFilter, Ordered {

    private final ReactiveLimiting limiting;
    private final RequestMappingHandlerMapping handlers;
    private final RateLimitedSupport support;
    private final int order;

    /**
     * Creates the filter.
     *
     * @param limiter the limiter
     * @param policy the tiers
     * @param identities finds the caller
     * @param handlers finds the handler method of a request
     * @param properties the settings: shadow mode, headers; its order is one after the filter's
     * @param offload whether to call the limiter off the event loop (its store blocks)
     */
    public RateLimitedWebFilter(
            RateLimiter limiter,
            TierPolicy policy,
            ReactiveIdentityResolver identities,
            RequestMappingHandlerMapping handlers,
            RateLimitProperties properties,
            boolean offload) {
        this.limiting = new ReactiveLimiting(limiter, policy, identities, properties, offload);
        this.handlers = handlers;
        this.support = new RateLimitedSupport(policy);
        this.order = properties.getFilter().getOrder() + 1;
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        return handlers.getHandler(exchange)
                .map(handler ->
                        Optional.ofNullable(handler instanceof HandlerMethod method ? support.budget(method) : null))
                .defaultIfEmpty(Optional.empty())
                .flatMap(budget -> budget.isEmpty()
                        ? chain.filter(exchange)
                        : limiting.caller(exchange).flatMap(caller -> limit(exchange, chain, budget.get(), caller)));
    }

    private Mono<Void> limit(
            ServerWebExchange exchange,
            WebFilterChain chain,
            RateLimitedSupport.Budget budget,
            Optional<Caller> caller) {
        CallerKeys.Subject subject = limiting.subject(exchange, caller);
        Tier tier = budget.tierFor(subject.tier());
        Map<String, String> variables = exchange.getAttributeOrDefault(
                HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE, Map.<String, String>of());
        String key = budget.keyFor(new RateLimitedSupport.KeyRoot(
                exchange.getRequest(), caller.map(Caller::principal).orElse(null), subject.key(), variables));
        return limiting.check(key, tier).flatMap(decision -> {
            if (decision.isEmpty()) {
                return limiting.unavailable(exchange, tier);
            }
            if (decision.get().allowed() || !limiting.enforce()) {
                return chain.filter(exchange);
            }
            return limiting.rejected(exchange, tier, decision.get());
        });
    }
}
