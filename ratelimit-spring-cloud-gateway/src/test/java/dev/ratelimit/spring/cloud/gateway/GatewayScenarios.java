package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.spring.boot.RateLimitStoreInfo;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.cloud.gateway.filter.factory.RequestRateLimiterGatewayFilterFactory;

/**
 * The gateway application with the tiered limiter swapped in for the gateway's own, driven over
 * HTTP: free keys get 5 requests a minute, pro keys 20, the export route 2 in a budget of its own.
 * Each test uses keys of its own, so the tests share one application.
 */
abstract class GatewayScenarios extends GatewayApplication {

    private static final ExecutorService POOL = Executors.newFixedThreadPool(20);

    private static final String FREE_POLICY = "\"minute\";q=5;w=60, \"day\";q=100;w=86400";

    @Autowired
    RateLimiter limiter;

    @Autowired
    TierPolicy policy;

    @Autowired
    RequestRateLimiterGatewayFilterFactory filterFactory;

    @Autowired
    RateLimitStoreInfo store;

    /** The store the application is expected to run on. */
    protected abstract String expectedStoreType();

    @Test
    void theGatewayFilterUsesTheTieredLimiterOnTheExpectedStore() {
        assertThat(filterFactory.getDefaultRateLimiter()).isInstanceOf(TieredRateLimiter.class);
        assertThat(store.type()).isEqualTo(expectedStoreType());
    }

    @Test
    void theSixthRequestOfAFreeKeyWithinAMinuteIsRefusedWithRetryAfterAndTheHeaders() {
        Http http = http();
        String key = key("free-six");
        for (int i = 1; i <= 5; i++) {
            String remaining = Integer.toString(5 - i);
            HttpResponse<String> allowed = http.get("/api/hello", key);
            assertThat(allowed.statusCode()).isEqualTo(200);
            assertThat(allowed.body()).isEqualTo("backend /api/hello");
            assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
            assertThat(allowed.headers().firstValue("X-RateLimit-Remaining")).hasValue(remaining);
            assertThat(allowed.headers().firstValue("X-RateLimit-Window")).hasValue("minute");
            assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue(FREE_POLICY);
            assertThat(allowed.headers().firstValue("RateLimit"))
                    .hasValueSatisfying(value -> assertThat(value).startsWith("\"minute\";r=" + remaining + ";t="));
            assertThat(allowed.headers().firstValue("Retry-After")).isEmpty();
        }

        HttpResponse<String> sixth = http.get("/api/hello", key);
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(sixth.body()).isEmpty();
        long retryAfter =
                Long.parseLong(sixth.headers().firstValue("Retry-After").orElseThrow());
        assertThat(retryAfter).isBetween(1L, 60L);
        assertThat(sixth.headers().firstValue("X-RateLimit-Limit")).hasValue("5");
        assertThat(sixth.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(sixth.headers().firstValue("X-RateLimit-Window")).hasValue("minute");
        assertThat(sixth.headers().firstValue("RateLimit-Policy")).hasValue(FREE_POLICY);
        long t = Long.parseLong(
                sixth.headers().firstValue("RateLimit").orElseThrow().replaceFirst("^\"minute\";r=0;t=", ""));
        assertThat(retryAfter).isGreaterThanOrEqualTo(t);
        assertThat(Backend.requests(key)).isEqualTo(5);

        // all or nothing: the refused request was charged to neither window
        assertThat(used(key, "free")).containsExactlyInAnyOrderEntriesOf(Map.of("minute", 5L, "day", 5L));
    }

    @Test
    void twentyConcurrentRequestsOfAFreeKeyGetExactlyFiveThrough() {
        Http http = http();
        String key = key("free-burst");
        List<CompletableFuture<HttpResponse<String>>> responses = IntStream.range(0, 20)
                .mapToObj(i -> CompletableFuture.supplyAsync(() -> http.get("/api/hello", key), POOL))
                .toList();
        Map<Integer, Long> statuses = responses.stream()
                .map(CompletableFuture::join)
                .collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
        assertThat(statuses).containsExactlyInAnyOrderEntriesOf(Map.of(200, 5L, 429, 15L));
        assertThat(Backend.requests(key)).isEqualTo(5);
        assertThat(used(key, "free")).containsExactlyInAnyOrderEntriesOf(Map.of("minute", 5L, "day", 5L));
    }

    @Test
    void aProKeyGetsTheProTier() {
        Http http = http();
        String key = key("pro-twenty");
        for (int i = 1; i <= 20; i++) {
            HttpResponse<String> allowed = http.get("/api/hello", key);
            assertThat(allowed.statusCode()).isEqualTo(200);
            assertThat(allowed.headers().firstValue("X-RateLimit-Limit")).hasValue("20");
        }
        HttpResponse<String> refused = http.get("/api/hello", key);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(refused.headers().firstValue("RateLimit-Policy"))
                .hasValue("\"minute\";q=20;w=60, \"day\";q=1000;w=86400");
        assertThat(Backend.requests(key)).isEqualTo(20);
    }

    @Test
    void aRouteWithItsOwnTierAndBudgetLeavesTheKeysBudgetAlone() {
        Http http = http();
        String key = key("free-exporter");
        assertThat(http.get("/export/a", key).statusCode()).isEqualTo(200);
        HttpResponse<String> second = http.get("/export/b", key);
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("RateLimit-Policy")).hasValue("\"minute\";q=2;w=60");
        HttpResponse<String> third = http.get("/export/c", key);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).isPresent();
        assertThat(third.headers().firstValue("X-RateLimit-Limit")).hasValue("2");

        HttpResponse<String> api = http.get("/api/hello", key);
        assertThat(api.statusCode()).isEqualTo(200);
        assertThat(api.headers().firstValue("X-RateLimit-Remaining")).hasValue("4");
        assertThat(Backend.requests(key)).isEqualTo(3);
    }

    /** A key of this test's own: the backend counts the requests of every application in this JVM. */
    private String key(String name) {
        return name + "-" + expectedStoreType();
    }

    /** What the key's windows of the tier hold, by window name. */
    private Map<String, Long> used(String key, String tier) {
        List<Decision.Usage> usage = limiter.usage(key, policy.resolve(tier));
        return usage.stream().collect(Collectors.toMap(u -> u.window().name(), Decision.Usage::used));
    }
}
