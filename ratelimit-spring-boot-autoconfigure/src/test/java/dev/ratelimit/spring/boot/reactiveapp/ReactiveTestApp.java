package dev.ratelimit.spring.boot.reactiveapp;

import dev.ratelimit.spring.boot.RateLimited;
import dev.ratelimit.spring.boot.TestJwts;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationConverter;
import org.springframework.security.oauth2.server.resource.authentication.JwtGrantedAuthoritiesConverter;
import org.springframework.security.oauth2.server.resource.authentication.ReactiveJwtAuthenticationConverterAdapter;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A WebFlux application as a user writes one: Spring Security as a reactive JWT resource server, a
 * few endpoints, and the starter configured in application.yml (test resources).
 */
@SpringBootApplication
public class ReactiveTestApp {

    @Bean
    SecurityWebFilterChain security(ServerHttpSecurity http) {
        JwtGrantedAuthoritiesConverter authorities = new JwtGrantedAuthoritiesConverter();
        authorities.setAuthoritiesClaimName("roles");
        authorities.setAuthorityPrefix("");
        JwtAuthenticationConverter converter = new JwtAuthenticationConverter();
        converter.setJwtGrantedAuthoritiesConverter(authorities);
        http.authorizeExchange(exchanges -> exchanges
                        .pathMatchers("/actuator/health", "/actuator/health/**")
                        .permitAll()
                        .pathMatchers("/actuator/**")
                        .hasAuthority("ADMIN")
                        .anyExchange()
                        .permitAll())
                .oauth2ResourceServer(server -> server.jwt(jwt ->
                        jwt.jwtAuthenticationConverter(new ReactiveJwtAuthenticationConverterAdapter(converter))))
                .csrf(ServerHttpSecurity.CsrfSpec::disable);
        return http.build();
    }

    @Bean
    ReactiveJwtDecoder jwtDecoder() {
        return NimbusReactiveJwtDecoder.withSecretKey(TestJwts.key()).build();
    }

    /** Spring AI's OpenAI model, at the OpenAI stub of the Spring AI scenarios (unused by the others). */
    @Bean
    OpenAiChatModel chatModel(@Value("${stub.base-url:http://127.0.0.1:9/v1}") String baseUrl) {
        return OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder()
                        .baseUrl(baseUrl)
                        .apiKey("test")
                        .model("gpt-4o-mini")
                        .maxRetries(0)
                        .build())
                .build();
    }

    /** Calls the model through a {@code ChatClient} that Spring AI's auto-configured builder made. */
    @RestController
    static class Chat {

        private final ChatClient chat;

        Chat(ChatClient.Builder builder) {
            this.chat = builder.build();
        }

        /** Streams the answer; the end user is the principal in the Reactor context. */
        @GetMapping("/chat")
        Mono<String> chat(@RequestParam String q) {
            return chat.prompt(q).stream().content().collectList().map(parts -> String.join("", parts));
        }
    }

    @RestController
    static class Api {

        @GetMapping("/api/hello")
        Mono<Map<String, String>> hello() {
            return Mono.just(Map.of("hello", "world"));
        }

        @GetMapping("/api/ping")
        Mono<String> ping() {
            return Mono.just("pong");
        }

        @RateLimited(tier = "export")
        @GetMapping("/api/export")
        Mono<String> export() {
            return Mono.just("exported");
        }

        @RateLimited(tier = "per-tenant", key = "#pathVariables['tenant']")
        @PostMapping("/api/tenants/{tenant}/jobs")
        Mono<String> submit(@PathVariable String tenant) {
            return Mono.just("queued for " + tenant);
        }
    }
}
