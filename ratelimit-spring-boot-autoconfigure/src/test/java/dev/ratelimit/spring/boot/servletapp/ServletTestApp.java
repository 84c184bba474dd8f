package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.RateLimited;
import dev.ratelimit.spring.boot.TestJwts;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configurers.AbstractHttpConfigurer;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationConverter;
import org.springframework.security.oauth2.server.resource.authentication.JwtGrantedAuthoritiesConverter;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring MVC application as a user writes one: Spring Security as a JWT resource server, a few
 * endpoints, and the starter configured in application.yml (test resources).
 */
@SpringBootApplication
public class ServletTestApp {

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        JwtGrantedAuthoritiesConverter authorities = new JwtGrantedAuthoritiesConverter();
        authorities.setAuthoritiesClaimName("roles");
        authorities.setAuthorityPrefix("");
        JwtAuthenticationConverter converter = new JwtAuthenticationConverter();
        converter.setJwtGrantedAuthoritiesConverter(authorities);
        http.authorizeHttpRequests(requests -> requests.requestMatchers("/actuator/health", "/actuator/health/**")
                        .permitAll()
                        .requestMatchers("/actuator/**")
                        .hasAuthority("ADMIN")
                        .anyRequest()
                        .permitAll())
                .oauth2ResourceServer(server -> server.jwt(jwt -> jwt.jwtAuthenticationConverter(converter)))
                .csrf(AbstractHttpConfigurer::disable);
        return http.build();
    }

    @Bean
    JwtDecoder jwtDecoder() {
        return NimbusJwtDecoder.withSecretKey(TestJwts.key()).build();
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

        @GetMapping("/chat")
        String chat(@RequestParam String q) {
            return chat.prompt(q).call().content();
        }
    }

    @RestController
    static class Api {

        @GetMapping("/api/hello")
        Map<String, String> hello() {
            return Map.of("hello", "world");
        }

        @GetMapping("/api/ping")
        String ping() {
            return "pong";
        }

        @RateLimited(tier = "export")
        @GetMapping("/api/export")
        String export() {
            return "exported";
        }

        @RateLimited(tier = "per-tenant", key = "#pathVariables['tenant']")
        @PostMapping("/api/tenants/{tenant}/jobs")
        String submit(@PathVariable String tenant) {
            return "queued for " + tenant;
        }
    }
}
