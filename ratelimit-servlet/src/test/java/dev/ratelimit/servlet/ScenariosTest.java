package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.testkit.MutableClock;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** Whole-request scenarios over a real Jetty and a real client, on the in-memory store. */
class ScenariosTest {

    private static final Map<String, TestServer.Account> ACCOUNTS = Map.of(
            "alice-free", new TestServer.Account("alice", "free"),
            "alice-pro", new TestServer.Account("alice", "pro"),
            "mallory-key", new TestServer.Account("mallory", "free"),
            "squatter-key", new TestServer.Account("ip:127.0.0.1", "free"));

    private final MutableClock clock = MutableClock.at(Instant.parse("2026-03-01T12:00:00Z"));
    private final CountingStore store = new CountingStore();
    private TestServer server;

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private TestServer start(boolean disabled) throws Exception {
        server = TestServer.start(
                new RateLimitFilter(
                        SlidingWindowRateLimiter.builder(store)
                                .clock(clock)
                                .disabled(disabled)
                                .build(),
                        TierPolicy.defaults()),
                ACCOUNTS);
        return server;
    }

    private HttpResponse<String> as(String key) throws Exception {
        return server.get("/v1/chat", "Authorization", "Bearer " + key);
    }

    @RepeatedTest(3)
    @DisplayName("20 concurrent requests of one free user: exactly 5 x 200 and 15 x 429")
    void concurrentBurst() throws Exception {
        start(false);
        ExecutorService pool = Executors.newFixedThreadPool(20);
        try {
            CountDownLatch ready = new CountDownLatch(20);
            CountDownLatch go = new CountDownLatch(1);
            HttpRequest request = server.request("/v1/chat", "Authorization", "Bearer alice-free");
            List<Future<HttpResponse<String>>> futures = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return server.client().send(request, HttpResponse.BodyHandlers.ofString());
                }));
            }
            assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
            go.countDown();
            int ok = 0;
            int limited = 0;
            for (Future<HttpResponse<String>> future : futures) {
                HttpResponse<String> response = future.get(60, TimeUnit.SECONDS);
                if (response.statusCode() == 200) {
                    ok++;
                } else if (response.statusCode() == 429) {
                    limited++;
                    assertThat(response.headers().firstValue("Retry-After")).contains("60");
                }
            }
            assertThat(ok).isEqualTo(5);
            assertThat(limited).isEqualTo(15);
            assertThat(server.appHits).hasValue(5);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("tier switch: 5 as free, then 55 more as pro in the same minute, then the pro limit")
    void tierSwitch() throws Exception {
        start(false);
        for (int i = 0; i < 5; i++) {
            assertThat(as("alice-free").statusCode()).isEqualTo(200);
        }
        assertThat(as("alice-free").statusCode()).isEqualTo(429);

        HttpResponse<String> last = null;
        for (int i = 0; i < 55; i++) {
            last = as("alice-pro");
            assertThat(last.statusCode()).as("pro request %d", i + 1).isEqualTo(200);
        }
        assertThat(last.headers().firstValue("X-RateLimit-Limit")).contains("60");
        assertThat(last.headers().firstValue("X-RateLimit-Remaining")).contains("0");

        HttpResponse<String> overPro = as("alice-pro");
        assertThat(overPro.statusCode()).isEqualTo(429);
        assertThat(overPro.headers().firstValue("X-RateLimit-Limit")).contains("60");
        assertThat(as("alice-free").statusCode()).isEqualTo(429);
        assertThat(store.subjects).containsExactly("alice");
        assertThat(server.appHits).hasValue(60);
    }

    @Test
    @DisplayName("spoofing: ?tier=, X-Forwarded-For and fake X-RateLimit-*/RateLimit request headers change nothing")
    void spoofing() throws Exception {
        start(false);
        String[] spoof = {
            "Authorization", "Bearer mallory-key",
            "X-Forwarded-For", "203.0.113.7",
            "Forwarded", "for=203.0.113.8",
            "X-Real-IP", "203.0.113.9",
            "X-RateLimit-Limit", "100000",
            "X-RateLimit-Remaining", "99999",
            "X-RateLimit-Tier", "enterprise",
            "X-RateLimit-User", "someone-else",
            "RateLimit-Policy", "\"minute\";q=600;w=60",
            "RateLimit", "\"minute\";r=599;t=1"
        };
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> response = server.get("/v1/chat?tier=enterprise&ratelimit.tier=enterprise", spoof);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Limit")).contains("5");
            assertThat(response.headers().firstValue("X-RateLimit-Remaining")).contains(Integer.toString(4 - i));
        }
        HttpResponse<String> sixth = server.get("/v1/chat?tier=enterprise&ratelimit.user=other", spoof);
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(store.subjects).containsExactly("mallory");
    }

    @Test
    @DisplayName("anonymous requests are limited by the container's client address, whatever they claim")
    void anonymous() throws Exception {
        start(false);
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> response = server.get("/v1/chat", "X-Forwarded-For", "198.51.100." + i);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Limit"))
                    .as("the default tier")
                    .contains("5");
        }
        HttpResponse<String> sixth = server.get("/v1/chat?tier=enterprise", "X-Forwarded-For", "198.51.100.99");
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(store.subjects).containsExactly("ip:127.0.0.1");

        HttpResponse<String> alice = as("alice-free");
        assertThat(alice.statusCode())
                .as("authenticated users have their own budget")
                .isEqualTo(200);
        assertThat(alice.headers().firstValue("X-RateLimit-Remaining")).contains("4");
    }

    @Test
    @DisplayName("a user whose id looks like an anonymous address key never shares that address's budget")
    void anonymousNamespaceIsReserved() throws Exception {
        start(false);
        for (int i = 0; i < 5; i++) {
            assertThat(as("squatter-key").statusCode()).isEqualTo(200);
        }
        assertThat(as("squatter-key").statusCode()).isEqualTo(429);
        assertThat(server.get("/v1/chat").statusCode())
                .as("anonymous callers from 127.0.0.1 keep their own budget")
                .isEqualTo(200);
        assertThat(store.subjects).contains("\\ip:127.0.0.1", "ip:127.0.0.1");
    }

    @Test
    @DisplayName("kill switch: a disabled limiter lets everything through with full budget and never calls the store")
    void killSwitch() throws Exception {
        start(true);
        AtomicInteger ok = new AtomicInteger();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            responses.add(server.client()
                    .sendAsync(
                            server.request("/v1/chat", "Authorization", "Bearer alice-free"),
                            HttpResponse.BodyHandlers.ofString()));
        }
        for (CompletableFuture<HttpResponse<String>> future : responses) {
            HttpResponse<String> response = future.get(60, TimeUnit.SECONDS);
            if (response.statusCode() == 200) {
                ok.incrementAndGet();
            }
            assertThat(response.headers().firstValue("X-RateLimit-Remaining")).contains("5");
            assertThat(response.headers().firstValue("Retry-After")).isEmpty();
        }
        assertThat(server.get("/v1/chat").statusCode()).isEqualTo(200);
        assertThat(ok).hasValue(30);
        assertThat(store.calls).hasValue(0);
    }

    @Test
    @DisplayName("shadow: a tier's shadow minute admits what its enforcing twin refuses, marked X-RateLimit-Shadow on"
            + " exactly those requests, counted in ratelimit.shadow.refusals, and never reported as a limit")
    void shadowTierMatchesItsEnforcingTwin() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        TierPolicy policy = TierPolicy.fromMap(Map.of(
                "tier",
                Map.of(
                        "strict", Map.of("minute", "3/60s"),
                        "trial", Map.of("minute", "3/60s shadow", "hour", "1000/1h"))));
        server = TestServer.start(
                new RateLimitFilter(
                        SlidingWindowRateLimiter.builder(store)
                                .clock(clock)
                                .metrics(MicrometerLimiterMetrics.of(registry))
                                .build(),
                        policy),
                Map.of(
                        "strict-key", new TestServer.Account("strict-user", "strict"),
                        "trial-key", new TestServer.Account("trial-user", "trial")));
        int refused = 0;
        int marked = 0;
        for (int i = 0; i < 12; i++) {
            HttpResponse<String> strict = as("strict-key");
            HttpResponse<String> trial = as("trial-key");
            assertThat(trial.statusCode()).as("trial request %d", i + 1).isEqualTo(200);
            boolean strictRefused = strict.statusCode() == 429;
            assertThat(trial.headers().firstValue("X-RateLimit-Shadow"))
                    .as("request %d: marked exactly when the enforcing twin refused", i + 1)
                    .isEqualTo(strictRefused ? java.util.Optional.of("minute") : java.util.Optional.empty());
            assertThat(trial.headers().firstValue("RateLimit-Policy"))
                    .as("the shadow minute is no policy of the caller's")
                    .contains("\"hour\";q=1000;w=3600");
            assertThat(trial.headers().firstValue("X-RateLimit-Window")).contains("hour");
            refused += strictRefused ? 1 : 0;
            marked += trial.headers().firstValue("X-RateLimit-Shadow").isPresent() ? 1 : 0;
            clock.advance(java.time.Duration.ofSeconds(9));
        }
        assertThat(marked).as("marked trial requests").isEqualTo(refused).isBetween(1, 11);
        assertThat(registry.get("ratelimit.shadow.refusals")
                        .tag("tier", "trial")
                        .tag("window", "minute")
                        .tag("level", "user")
                        .counter()
                        .count())
                .as("the counter")
                .isEqualTo(refused);
        assertThat(server.appHits).hasValue(12 + 12 - refused);
    }
}
