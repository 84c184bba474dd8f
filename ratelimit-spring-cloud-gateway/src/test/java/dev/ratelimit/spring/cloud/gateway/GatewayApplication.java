package dev.ratelimit.spring.cloud.gateway;

import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** What every test of the gateway application has: its routes to {@link Backend}, and its port. */
abstract class GatewayApplication {

    @DynamicPropertySource
    static void backend(DynamicPropertyRegistry registry) {
        registry.add("backend.port", Backend::port);
    }

    @LocalServerPort
    int port;

    /** A real HTTP client against the gateway. */
    Http http() {
        return new Http(port);
    }
}
