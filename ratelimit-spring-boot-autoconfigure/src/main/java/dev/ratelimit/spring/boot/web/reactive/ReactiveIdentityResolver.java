package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.internal.Callers;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Tells the WebFlux filter whose budget a request is charged to, without blocking. An empty result
 * marks the request as anonymous: it is then limited by the client address the server reports,
 * under the default tier. Never derive the caller from a value the client sets freely (a query
 * parameter, {@code X-Forwarded-For}).
 */
@FunctionalInterface
public interface ReactiveIdentityResolver {

    /**
     * Returns the caller of a request, or an empty {@code Mono} when anonymous.
     *
     * @param exchange the exchange
     * @return the caller
     */
    Mono<Caller> resolve(ServerWebExchange exchange);

    /**
     * Returns the default resolver: the exchange's authenticated principal (Spring Security's
     * {@code Authentication}, whose {@code getName()} is the id) and the tier the {@link
     * TierResolver} finds on it.
     *
     * @param tiers finds the tier
     * @return the resolver
     */
    static ReactiveIdentityResolver principal(TierResolver tiers) {
        return exchange -> exchange.getPrincipal()
                .filter(Callers::authenticated)
                .map(principal -> new Caller(principal.getName(), tiers.resolveTier(principal), principal));
    }
}
