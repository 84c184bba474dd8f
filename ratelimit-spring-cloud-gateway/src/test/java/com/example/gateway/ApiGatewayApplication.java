package com.example.gateway;

import dev.ratelimit.spring.boot.TierResolver;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

@SpringBootApplication
public class ApiGatewayApplication {

    public static void main(String[] args) {
        SpringApplication.run(ApiGatewayApplication.class, args);
    }

    /** Whose budget a request spends: its X-Api-Key header (unchanged by the swap). */
    @Bean
    KeyResolver apiKeyResolver() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Api-Key"));
    }

    /** The tier of a key, on routes that name none: here keys starting "pro-" are pro, others the default. */
    @Bean
    TierResolver tierResolver() {
        return key -> key.getName().startsWith("pro-") ? "pro" : null;
    }
}
