package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The scenarios every test application passes, on each stack and store: real HTTP against a real
 * server, real JWTs through Spring Security. Each test spends its own users' budgets; only {@link
 * #anonymousSixthRequestWithinAMinuteGets429WithTheContractsHeaders} is anonymous.
 */
public abstract class Scenarios {

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meterRegistry;

    protected Http http() {
        return new Http(port);
    }

    @Test
    void anonymousSixthRequestWithinAMinuteGets429WithTheContractsHeaders() {
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> allowed = http().get("/api/hello");
            assertThat(allowed.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
            assertThat(allowed.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(5 - i));
            assertThat(allowed.headers().firstValue("X-RateLimit-Window")).hasValue("minute");
            assertThat(allowed.headers().firstValue("Retry-After")).isEmpty();
        }
        HttpResponse<String> rejected = http().get("/api/hello");
        assertThat(rejected.statusCode()).isEqualTo(429);
        long retryAfter =
                Long.parseLong(rejected.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(1L, 60L);
        assertThat(rejected.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
        assertThat(rejected.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(rejected.headers().firstValue("X-RateLimit-Window")).hasValue("minute");
        assertThat(rejected.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"minute\";q=5;w=60, \"day\";q=100;w=86400");
        assertThat(rejected.headers().firstValue("RateLimit")).hasValue("\"minute\";r=0;t=" + retryAfter);
        assertThat(rejected.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
        assertThat(rejected.body())
                .startsWith("{\"error\":\"rate_limited\",\"window\":\"minute\",\"limit\":5,\"retry_after_seconds\":"
                        + retryAfter + ",");
    }

    @Test
    public void theTierComesFromThePrincipalsPlanClaim() {
        String token = TestJwts.token("claim-user", "pro");
        for (int i = 1; i <= 6; i++) {
            HttpResponse<String> response = http().get("/api/hello", token);
            assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Limit")).hasValue("60");
            assertThat(response.headers().firstValue("X-RateLimit-Remaining")).hasValue(String.valueOf(60 - i));
        }
        assertThat(http().get("/api/hello", token).headers().firstValue("RateLimit-Policy"))
                .hasValue("\"minute\";q=60;w=60, \"day\";q=5000;w=86400, \"tokens-day\";q=1000000;w=86400");
    }

    @Test
    public void theTierComesFromATierAuthorityWhenThereIsNoClaim() {
        String token = TestJwts.token("authority-user", null, List.of("TIER_enterprise"));
        HttpResponse<String> response = http().get("/api/hello", token);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("X-RateLimit-Limit")).hasValue("600");
    }

    @Test
    public void authenticatedUsersHaveTheirOwnBudgetUnderTheDefaultTier() {
        String alice = TestJwts.token("alice", null);
        for (int i = 1; i <= 5; i++) {
            assertThat(http().get("/api/hello", alice).statusCode()).isEqualTo(200);
        }
        assertThat(http().get("/api/hello", alice).statusCode()).isEqualTo(429);
        HttpResponse<String> bob = http().get("/api/hello", TestJwts.token("bob", "no-such-plan"));
        assertThat(bob.statusCode()).isEqualTo(200);
        assertThat(bob.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");
    }

    @Test
    public void excludedPathsAreNeitherLimitedNorCounted() {
        String token = TestJwts.token("pinger", null);
        for (int i = 0; i < 8; i++) {
            HttpResponse<String> response = http().get("/api/ping", token);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Limit")).isEmpty();
        }
        assertThat(http().get("/api/hello", token).headers().firstValue("X-RateLimit-Remaining"))
                .hasValue("4");
    }

    @Test
    public void rateLimitedMethodHasItsOwnBudgetAndTier() {
        String token = TestJwts.token("exporter", "pro");
        assertThat(http().get("/api/export", token).statusCode()).isEqualTo(200);
        assertThat(http().get("/api/export", token).statusCode()).isEqualTo(200);
        HttpResponse<String> rejected = http().get("/api/export", token);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("X-RateLimit-Limit")).hasValue("2");
        assertThat(rejected.headers().firstValue("RateLimit-Policy")).hasValue("\"minute\";q=2;w=60");
        assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
        // the API-wide budget (pro: 60 a minute) only saw the three calls
        HttpResponse<String> hello = http().get("/api/hello", token);
        assertThat(hello.statusCode()).isEqualTo(200);
        assertThat(hello.headers().firstValue("X-RateLimit-Remaining")).hasValue("56");
    }

    @Test
    public void rateLimitedKeyExpressionGivesEachTenantABudget() {
        String token = TestJwts.token("scheduler", "pro");
        assertThat(http().post("/api/tenants/acme/jobs", token).statusCode()).isEqualTo(200);
        assertThat(http().post("/api/tenants/acme/jobs", token).statusCode()).isEqualTo(200);
        assertThat(http().post("/api/tenants/acme/jobs", token).statusCode()).isEqualTo(429);
        // another caller of the same tenant shares its budget; another tenant has its own
        assertThat(http().post("/api/tenants/acme/jobs", TestJwts.token("scheduler-2", "pro"))
                        .statusCode())
                .isEqualTo(429);
        HttpResponse<String> other = http().post("/api/tenants/globex/jobs", token);
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(other.body()).isEqualTo("queued for globex");
    }

    @Test
    public void healthShowsTheStoreReachableAndTheBreakerClosed() {
        HttpResponse<String> health = http().get("/actuator/health/rateLimit");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body())
                .contains("\"status\":\"UP\"")
                .contains("\"store\":\"reachable\"")
                .contains("\"circuitBreaker\":\"closed\"")
                .contains("\"storeType\":\"" + expectedStoreType() + "\"");
    }

    @Test
    public void usageEndpointIsSecuredLikeOtherActuatorEndpointsAndShowsEachWindow() {
        String token = TestJwts.token("usage-user", null);
        http().get("/api/hello", token);
        http().get("/api/hello", token);
        assertThat(http().get("/actuator/ratelimit/usage-user").statusCode()).isEqualTo(401);
        assertThat(http().get("/actuator/ratelimit/usage-user", token).statusCode())
                .isEqualTo(403);
        String admin = TestJwts.token("admin", null, List.of("ADMIN"));
        HttpResponse<String> usage = http().get("/actuator/ratelimit/usage-user", admin);
        assertThat(usage.statusCode()).isEqualTo(200);
        assertThat(usage.body())
                .contains("\"user\":\"usage-user\"")
                .contains("\"tier\":\"free\"")
                .contains("\"window\":\"minute\",\"unit\":\"requests\",\"limit\":5,\"used\":2,\"remaining\":3")
                .contains("\"window\":\"day\",\"unit\":\"requests\",\"limit\":100,\"used\":2,\"remaining\":98");
        HttpResponse<String> pro = http().get("/actuator/ratelimit/usage-user?tier=pro", admin);
        assertThat(pro.body()).contains("\"tier\":\"pro\"").contains("\"window\":\"tokens-day\"");
    }

    @Test
    public void decisionsAreCountedInTheApplicationsMeterRegistry() {
        String token = TestJwts.token("metered", null);
        for (int i = 0; i < 6; i++) {
            http().get("/api/hello", token);
        }
        assertThat(meterRegistry
                        .find("ratelimit.decisions")
                        .tags("tier", "free", "outcome", "rejected")
                        .counter())
                .isNotNull()
                .satisfies(counter -> assertThat(counter.count()).isGreaterThanOrEqualTo(1));
    }

    /** The store the application runs on: in-memory, lettuce or jedis. */
    protected abstract String expectedStoreType();
}
