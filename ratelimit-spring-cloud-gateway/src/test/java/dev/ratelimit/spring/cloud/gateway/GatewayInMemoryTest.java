package dev.ratelimit.spring.cloud.gateway;

import org.springframework.boot.test.context.SpringBootTest;

/** The gateway application on the in-memory store. */
@SpringBootTest(
        classes = GatewayTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.store=in-memory")
class GatewayInMemoryTest extends GatewayScenarios {

    @Override
    protected String expectedStoreType() {
        return "in-memory";
    }
}
