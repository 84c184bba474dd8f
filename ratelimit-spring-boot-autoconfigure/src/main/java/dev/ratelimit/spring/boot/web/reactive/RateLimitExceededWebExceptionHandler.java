package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.web.internal.ContractResponses;
import dev.ratelimit.spring.boot.web.internal.ModelRefusals;
import org.springframework.core.Ordered;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers a WebFlux handler's refused model call ({@link RateLimitExceededException}, from the
 * Spring AI advisor or the LangChain4j decorators) with the HTTP contract: 429 (400 when the call
 * alone is larger than a window) with the headers {@code ratelimit.headers.*} configures, as the
 * filter's own refusals. Ordered before Spring Boot's error handler.
 */
public final class RateLimitExceededWebExceptionHandler implements WebExceptionHandler, Ordered {

    private final RateLimitResponses responses;

    /**
     * Creates the handler.
     *
     * @param properties the settings: headers
     */
    public RateLimitExceededWebExceptionHandler(RateLimitProperties properties) {
        this.responses = ContractResponses.of(properties);
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
        RateLimitExceededException refusal = ModelRefusals.find(error);
        ServerHttpResponse response = exchange.getResponse();
        if (refusal == null || response.isCommitted()) {
            return Mono.error(error);
        }
        return ReactiveLimiting.send(
                response, responses.rejected(refusal.tier(), refusal.decision(), response.getHeaders()::set));
    }

    @Override
    public int getOrder() {
        return -2; // before Spring Boot's DefaultErrorWebExceptionHandler (-1)
    }
}
