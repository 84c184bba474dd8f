package dev.ratelimit.spring.cloud.gateway;

import dev.ratelimit.spring.boot.TierResolver;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway application as a user writes one: routes in application.yml (test
 * resources) to a local backend, each with the {@code RequestRateLimiter} filter, and a key
 * resolver reading the {@code X-Api-Key} header. Keys starting {@code pro-} are of the pro tier.
 */
@SpringBootApplication
public class GatewayTestApp {

    @Bean
    KeyResolver apiKeyResolver() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
    }

    @Bean
    TierResolver tierResolver() {
        return key -> key.getName().startsWith("pro-") ? "pro" : null;
    }
}
