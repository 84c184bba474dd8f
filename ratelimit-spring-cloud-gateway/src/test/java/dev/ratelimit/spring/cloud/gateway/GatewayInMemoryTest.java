package dev.ratelimit.spring.cloud.gateway;

import com.example.gateway.ApiGatewayApplication;
import org.springframework.boot.test.context.SpringBootTest;

/** The gateway application on the in-memory store. */
@SpringBootTest(
        classes = ApiGatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"ratelimit.store=in-memory", GatewayApplication.WITHOUT_SECURITY})
class GatewayInMemoryTest extends GatewayScenarios {

    @Override
    protected String expectedStoreType() {
        return "in-memory";
    }
}
