package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.servlet.internal.Keys;
import dev.ratelimit.servlet.internal.RateLimitResponses;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.web.PathPatterns;
import dev.ratelimit.spring.boot.web.internal.ContractResponses;
import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

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

    private final RateLimiter limiter;
    private final TierPolicy policy;
    private final ReactiveIdentityResolver identities;
    private final PathPatterns paths;
    private final PathPatterns exclusions;
    private final Set<String> exemptMethods;
    private final boolean enforce;
    private final boolean offload;
    private final RateLimitResponses responses;
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
        this.limiter = limiter;
        this.policy = policy;
        this.identities = identities;
        this.paths = PathPatterns.of(properties.getPaths(), "ratelimit.paths");
        this.exclusions = PathPatterns.of(properties.getExcludePaths(), "ratelimit.exclude-paths");
        this.exemptMethods = properties.getExemptMethods().stream()
                .map(method -> method.trim().toUpperCase(Locale.ROOT))
                .collect(Collectors.toUnmodifiableSet());
        this.enforce = !properties.isShadowMode();
        this.offload = offload;
        this.responses = ContractResponses.of(properties);
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
        return identities
                .resolve(exchange)
                .map(Optional::of)
                .defaultIfEmpty(Optional.empty())
                .flatMap(caller -> {
                    Keys.Subject subject = caller.isPresent()
                            ? Keys.subject(caller.get().userId(), caller.get().tier(), address(request), policy)
                            : Keys.subject(null, null, address(request), policy);
                    String user = subject.key();
                    Tier tier = subject.tier();
                    return checkOrUnavailable(limiter, user, tier, offload)
                            .flatMap(decision -> decision.isPresent()
                                    ? decided(exchange, chain, tier, decision.get())
                                    : ReactiveResponses.writeJson(
                                            exchange.getResponse(),
                                            responses.unavailable(
                                                    ReactiveResponses.target(exchange.getResponse()), tier)));
                });
    }

    private Mono<Void> decided(ServerWebExchange exchange, WebFilterChain chain, Tier tier, Decision decision) {
        exchange.getAttributes().put(RateLimitFilter.DECISION_ATTRIBUTE, decision);
        if (decision.allowed()) {
            responses.allowed(ReactiveResponses.target(exchange.getResponse()), tier, decision);
            return chain.filter(exchange);
        }
        if (!enforce) {
            return chain.filter(exchange);
        }
        return ReactiveResponses.writeJson(
                exchange.getResponse(),
                responses.rejected(ReactiveResponses.target(exchange.getResponse()), tier, decision));
    }

    /**
     * One asynchronous check, on the bounded-elastic scheduler when the store's calls block; empty
     * when a fail-closed limiter cannot reach its store.
     */
    static Mono<Optional<Decision>> checkOrUnavailable(RateLimiter limiter, String user, Tier tier, boolean offload) {
        Mono<Decision> decision = Mono.defer(() -> Mono.fromCompletionStage(limiter.checkAsync(user, tier)));
        return (offload ? decision.subscribeOn(Schedulers.boundedElastic()) : decision)
                .map(Optional::of)
                .onErrorResume(RateLimitWebFilter::unavailable, e -> Mono.just(Optional.empty()));
    }

    /** Whether a failure means a fail-closed limiter could not reach its store. */
    static boolean unavailable(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause instanceof RateLimiterUnavailableException;
    }

    static @Nullable String address(ServerHttpRequest request) {
        InetSocketAddress remote = request.getRemoteAddress();
        if (remote == null) {
            return null;
        }
        return remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.getHostString();
    }

    @Override
    public String toString() {
        return "RateLimitWebFilter{limiter=" + limiter + ", offload=" + offload + (enforce ? "" : ", SHADOW MODE")
                + "}";
    }
}
