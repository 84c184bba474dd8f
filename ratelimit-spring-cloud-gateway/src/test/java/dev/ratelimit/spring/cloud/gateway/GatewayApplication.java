package dev.ratelimit.spring.cloud.gateway;

import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** What every test of the gateway application has: its routes to {@link Backend}, and its port. */
abstract class GatewayApplication {

    /**
     * The documented application has no Spring Security; it is on this module's test class path for
     * {@link SecuredGatewayTest}, so the other tests leave its auto-configuration out.
     */
    static final String WITHOUT_SECURITY = "spring.autoconfigure.exclude="
            + "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration,"
            + "org.springframework.boot.security.oauth2.server.resource.autoconfigure.reactive."
            + "ReactiveOAuth2ResourceServerAutoConfiguration";

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.port", Backend::port);
    }

    @LocalServerPort
    int port;

    /** Points Spring Boot's Redis client, and so the Lettuce store, at a test's private redis-server. */
    static void redis(DynamicPropertyRegistry registry, RedisServerExtension<RedisServer> redis) {
        registry.add("spring.data.redis.host", () -> redis.get().host());
        registry.add("spring.data.redis.port", () -> redis.get().port());
    }

    /** A real HTTP client against the gateway. */
    Http http() {
        return new Http(port);
    }
}
