package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spring.cloud.gateway.secured.SecuredGatewayApp;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Behind Spring Security: the authenticated caller's name is the key (the gateway's default key
 * resolver) and its JWT's {@code plan} claim the tier (the starter's default tier resolver), on the
 * in-memory store.
 */
@SpringBootTest(
        classes = SecuredGatewayApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.config.name=secured", "ratelimit.store=in-memory"})
class SecuredGatewayTest extends GatewayApplication {

    @Test
    void theCallersPlanClaimIsTheTierAndItsNameTheBudget() {
        Http http = http();
        HttpResponse<String> pro = http.getWithToken("/api/hello", SecuredGatewayApp.token("alice", "pro"));
        assertThat(pro.statusCode()).isEqualTo(200);
        assertThat(pro.headers().firstValue("X-RateLimit-Limit")).hasValue("20");
        assertThat(pro.headers().firstValue("X-RateLimit-Remaining")).hasValue("19");

        String free = SecuredGatewayApp.token("bob", null);
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> allowed = http.getWithToken("/api/hello", free);
            assertThat(allowed.statusCode()).isEqualTo(200);
            assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
        }
        HttpResponse<String> sixth = http.getWithToken("/api/hello", free);
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(sixth.headers().firstValue("Retry-After")).isPresent();

        // the name is the budget: bob's token with another plan spends the same budget, at that plan's limits
        HttpResponse<String> bobAsPro = http.getWithToken("/api/hello", SecuredGatewayApp.token("bob", "pro"));
        assertThat(bobAsPro.statusCode()).isEqualTo(200);
        assertThat(bobAsPro.headers().firstValue("X-RateLimit-Remaining")).hasValue("14");
    }
}
