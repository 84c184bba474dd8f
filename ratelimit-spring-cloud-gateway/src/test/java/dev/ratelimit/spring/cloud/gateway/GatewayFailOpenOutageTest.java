package dev.ratelimit.spring.cloud.gateway;

import com.example.gateway.ApiGatewayApplication;
import org.springframework.boot.test.context.SpringBootTest;

/** The gateway application on Redis, ratelimit.fail-open=true, when Redis stops. */
@SpringBootTest(
        classes = ApiGatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"ratelimit.fail-open=true", GatewayApplication.WITHOUT_SECURITY})
class GatewayFailOpenOutageTest extends GatewayOutageScenarios {

    @Override
    protected boolean failOpen() {
        return true;
    }
}
