package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.CallerKeys;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.Refusal;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.web.internal.ContractResponses;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * What both WebFlux filters do alike: find the caller and its budget key, make one non-blocking
 * check (off the event loop when the store blocks), and answer with the HTTP contract's headers,
 * 429 and 503.
 */
final class ReactiveLimiting {

    private final RateLimiter limiter;
    private final TierPolicy policy;
    private final ReactiveIdentityResolver identities;
    private final RateLimitResponses responses;
    private final boolean enforce;
    private final boolean offload;

    ReactiveLimiting(
            RateLimiter limiter,
            TierPolicy policy,
            ReactiveIdentityResolver identities,
            RateLimitProperties properties,
            boolean offload) {
        this.limiter = limiter;
        this.policy = policy;
        this.identities = identities;
        this.responses = ContractResponses.of(properties);
        this.enforce = !properties.isShadowMode();
        this.offload = offload;
    }

    /** Whether rejections are answered (not shadow mode). */
    boolean enforce() {
        return enforce;
    }

    /** The caller of the exchange; empty when anonymous. */
    Mono<Optional<Caller>> caller(ServerWebExchange exchange) {
        return identities.resolve(exchange).map(Optional::of).defaultIfEmpty(Optional.empty());
    }

    /** Whom the exchange is counted against: the caller's key and tier, or the client address's. */
    CallerKeys.Subject subject(ServerWebExchange exchange, Optional<Caller> caller) {
        String address = address(exchange.getRequest());
        return caller.isPresent()
                ? CallerKeys.subject(caller.get().userId(), caller.get().tier(), address, policy)
                : CallerKeys.subject(null, null, address, policy);
    }

    /**
     * One asynchronous check, on the bounded-elastic scheduler when the store's calls block; empty
     * when a fail-closed limiter cannot reach its store.
     */
    Mono<Optional<Decision>> check(String key, Tier tier) {
        Mono<Decision> decision = Mono.defer(() -> Mono.fromCompletionStage(limiter.checkAsync(key, tier)));
        return (offload ? decision.subscribeOn(Schedulers.boundedElastic()) : decision)
                .map(Optional::of)
                .onErrorResume(ReactiveLimiting::unavailable, e -> Mono.just(Optional.empty()));
    }

    void allowed(ServerWebExchange exchange, Tier tier, Decision decision) {
        responses.allowed(tier, decision, exchange.getResponse().getHeaders()::set);
    }

    Mono<Void> rejected(ServerWebExchange exchange, Tier tier, Decision decision) {
        return send(
                exchange.getResponse(),
                responses.rejected(tier, decision, exchange.getResponse().getHeaders()::set));
    }

    Mono<Void> unavailable(ServerWebExchange exchange, Tier tier) {
        return send(
                exchange.getResponse(),
                responses.unavailable(tier, exchange.getResponse().getHeaders()::set));
    }

    static Mono<Void> send(ServerHttpResponse response, Refusal refusal) {
        byte[] body = refusal.bytes();
        response.setStatusCode(HttpStatusCode.valueOf(refusal.status()));
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** Whether a failure means a fail-closed limiter could not reach its store. */
    private static boolean unavailable(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause instanceof RateLimiterUnavailableException;
    }

    private static @Nullable String address(ServerHttpRequest request) {
        InetSocketAddress remote = request.getRemoteAddress();
        if (remote == null) {
            return null;
        }
        return remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.getHostString();
    }

    @Override
    public String toString() {
        return "limiter=" + limiter + ", offload=" + offload + (enforce ? "" : ", SHADOW MODE");
    }
}
