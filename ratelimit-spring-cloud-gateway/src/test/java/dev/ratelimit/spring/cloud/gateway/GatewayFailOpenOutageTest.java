package dev.ratelimit.spring.cloud.gateway;

import org.springframework.boot.test.context.SpringBootTest;

/** The gateway application on Redis, ratelimit.fail-open=true, when Redis stops. */
@SpringBootTest(
        classes = GatewayTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.fail-open=true")
class GatewayFailOpenOutageTest extends GatewayOutageScenarios {

    @Override
    protected boolean failOpen() {
        return true;
    }
}
