package dev.ratelimit.spring.cloud.gateway;

import com.example.gateway.ApiGatewayApplication;
import org.springframework.boot.test.context.SpringBootTest;

/** The gateway application on Redis, ratelimit.fail-open=false, when Redis stops. */
@SpringBootTest(
        classes = ApiGatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"ratelimit.fail-open=false", GatewayApplication.WITHOUT_SECURITY})
class GatewayFailClosedOutageTest extends GatewayOutageScenarios {

    @Override
    protected boolean failOpen() {
        return false;
    }
}
