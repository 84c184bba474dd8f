package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.redis.lettuce.LettuceWindowStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.lettuce.core.RedisClient;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real Redis ({@code redis-server} process) stopped and restarted in the middle of a run of HTTP
 * traffic through the filter and the Lettuce store: never a 500, the fail-open gauge rising and
 * falling, and limiting back once Redis is.
 */
class RedisOutageTest {

    private static final int LOAD_THREADS = 2;
    private static final int ENOUGH = 20;

    private final Map<String, TestServer.Account> accounts = Map.of(
            "load-0", new TestServer.Account("load-0", "big"),
            "load-1", new TestServer.Account("load-1", "big"),
            "probe", new TestServer.Account("probe", "free"));
    private final TierPolicy tiers = TierPolicy.builder()
            .tier("big", new Window("minute", 1_000_000, Duration.ofMinutes(1)))
            .tier(TierPolicy.defaults().resolve("free"))
            .defaultTier("free")
            .build();

    @RegisterExtension
    final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    private RedisClient client;
    private WindowStore store;
    private TestServer server;

    @BeforeEach
    void connect() {
        client = RedisClient.create(redis.get().uri());
        store = LettuceWindowStore.builder(client)
                .commandTimeout(Duration.ofMillis(500))
                .build();
    }

    @AfterEach
    void stopAll() throws Exception {
        if (server != null) {
            server.close();
        }
        if (store instanceof AutoCloseable closeable) {
            closeable.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    /** Outcomes seen by the background traffic, counted by kind. */
    private static final class Tally {
        final ConcurrentMap<String, AtomicInteger> counts = new ConcurrentHashMap<>();

        void add(String kind) {
            counts.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
        }

        int get(String kind) {
            AtomicInteger count = counts.get(kind);
            return count == null ? 0 : count.get();
        }
    }

    @ParameterizedTest(name = "failOpen({0})")
    @ValueSource(booleans = {true, false})
    @DisplayName("Redis stopped and restarted mid-run: zero 500s, the gauge rises and falls, limits come back")
    void outageMidRun(boolean failOpen) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .failOpen(failOpen)
                .metrics(MicrometerLimiterMetrics.of(registry))
                .name("outage")
                .circuitBreaker(CircuitBreakerConfig.custom()
                        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                        .slidingWindowSize(4)
                        .minimumNumberOfCalls(2)
                        .failureRateThreshold(50)
                        .waitDurationInOpenState(Duration.ofMillis(500))
                        .permittedNumberOfCallsInHalfOpenState(1)
                        .recordExceptions(RuntimeException.class)
                        .build())
                .build();
        server = TestServer.start(
                RateLimitFilter.builder(limiter, tiers)
                        .unavailableRetryAfter(Duration.ofSeconds(1))
                        .build(),
                accounts);
        Gauge failOpenGauge = registry.get("ratelimit.fail.open").gauge();

        Tally tally = new Tally();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> load = new ArrayList<>();
        for (int i = 0; i < LOAD_THREADS; i++) {
            String key = "load-" + i;
            Thread thread = new Thread(
                    () -> {
                        while (running.get()) {
                            try {
                                tally.add(classify(server.get("/v1/chat", "Authorization", "Bearer " + key)));
                                Thread.sleep(10);
                            } catch (InterruptedException e) {
                                return;
                            } catch (Exception e) {
                                tally.add("client-error " + e);
                            }
                        }
                    },
                    "load-" + i);
            thread.start();
            load.add(thread);
        }
        try {
            awaitCondition("healthy traffic before the outage", () -> tally.get("limited") >= ENOUGH);
            assertThat(failOpenGauge.value()).isZero();

            redis.get().stop();
            String outage = failOpen ? "degraded" : "unavailable";
            int outageBefore = tally.get(outage);
            awaitCondition("outage responses", () -> tally.get(outage) >= outageBefore + ENOUGH);
            assertThat(failOpenGauge.value())
                    .as("the alerting gauge while the store is down")
                    .isEqualTo(failOpen ? 1.0 : 0.0);
            assertThat(registry.get("ratelimit.store.failures").counters()).isNotEmpty();

            HttpResponse<String> probe = server.get("/v1/chat", "Authorization", "Bearer probe");
            if (failOpen) {
                assertThat(probe.statusCode()).isEqualTo(200);
                assertThat(probe.headers().firstValue("X-RateLimit-Degraded")).contains("minute, day");
            } else {
                assertThat(probe.statusCode()).isEqualTo(503);
                assertThat(probe.headers().firstValue("Retry-After")).contains("1");
                assertThat(probe.body()).contains("\"error\":\"rate_limiter_unavailable\"");
            }

            redis.get().restart();
            int healthyBefore = tally.get("limited");
            awaitCondition(
                    "healthy traffic after the restart",
                    () -> tally.get("limited") >= healthyBefore + ENOUGH && failOpenGauge.value() == 0.0);
            assertThat(failOpenGauge.value()).isZero();
        } finally {
            running.set(false);
            for (Thread thread : load) {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            }
        }

        System.out.println("failOpen=" + failOpen + " outcomes " + tally.counts);
        assertThat(tally.get("500")).as("no 500, ever").isZero();
        assertThat(tally.counts.keySet())
                .as("every response was one of the expected kinds: %s", tally.counts)
                .isSubsetOf(failOpen ? List.of("limited", "degraded") : List.of("limited", "unavailable"));

        // limiting really works again: the free probe user (Redis is empty after the restart) gets 5, then 429
        for (int i = 0; i < 5; i++) {
            assertThat(server.get("/v1/chat", "Authorization", "Bearer probe").statusCode())
                    .isEqualTo(200);
        }
        HttpResponse<String> sixth = server.get("/v1/chat", "Authorization", "Bearer probe");
        assertThat(sixth.statusCode()).isEqualTo(429);
        assertThat(sixth.headers().firstValue("Retry-After")).isPresent();
    }

    private static String classify(HttpResponse<String> response) {
        int status = response.statusCode();
        if (status == 200) {
            if (response.headers().firstValue("X-RateLimit-Degraded").isPresent()) {
                return "degraded";
            }
            return response.headers().firstValue("X-RateLimit-Remaining").isPresent() ? "limited" : "200-bare";
        }
        if (status == 503
                && response.headers().firstValue("Retry-After").isPresent()
                && response.body().contains("rate_limiter_unavailable")) {
            return "unavailable";
        }
        return Integer.toString(status);
    }

    /** Polls a condition a bounded number of times; fails with the description when it never holds. */
    private static void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
        for (int i = 0; i < 600; i++) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(50);
        }
        fail("never saw " + what);
    }
}
