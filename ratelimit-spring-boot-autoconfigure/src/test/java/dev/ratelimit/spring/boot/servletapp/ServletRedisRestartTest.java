package dev.ratelimit.spring.boot.servletapp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spring.boot.Http;
import dev.ratelimit.spring.boot.TestJwts;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * An application that uses Spring Data Redis for its own data and the starter, both on the Lettuce
 * client Spring Boot created, on a private redis-server that the test kills and starts again on the
 * same port: the application's {@code StringRedisTemplate} and the limiter both recover, without
 * restarting the application.
 */
@SpringBootTest(
        classes = ServletTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.fail-open=true")
@DirtiesContext
class ServletRedisRestartTest {

    /**
     * The limiter's recovery bound the test holds: docs/reliability.md promises about half a second
     * from Redis answering again (the breaker's 0.5 s open time plus one probe); four times that
     * leaves room for a loaded build machine, while a store that waited for Lettuce's own
     * reconnection (seconds, backing off) would fail it.
     */
    static final Duration LIMITER_RECOVERY_BOUND = Duration.ofSeconds(2);

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", () -> REDIS.get().host());
        registry.add("spring.data.redis.port", () -> REDIS.get().port());
    }

    @LocalServerPort
    int port;

    @Autowired
    StringRedisTemplate template;

    @Test
    void theApplicationsTemplateAndTheLimiterBothRecoverAfterRedisRestarts() throws Exception {
        Http http = new Http(port);
        template.opsForValue().set("application:greeting", "hello");
        String before = TestJwts.token("restart-before", null);
        assertThat(http.get("/api/hello", before).headers().firstValue("X-RateLimit-Remaining"))
                .hasValue("4");

        REDIS.get().kill();
        HttpResponse<String> down = http.get("/api/hello", before);
        assertThat(down.statusCode()).isEqualTo(200);
        assertThat(down.headers().firstValue("X-RateLimit-Degraded")).hasValue("minute, day");
        REDIS.get().startAgain(); // returns once the restarted server answers PING: the clock starts
        long restarted = System.nanoTime();

        // each on its own thread: the template's command waits while its connection reconnects
        CompletableFuture<Long> templateBack = CompletableFuture.supplyAsync(() -> firstSuccess(restarted, 1, () -> {
            template.opsForValue().set("application:greeting", "again");
            return true;
        }));
        // The breaker's half-open state lets three checks through and opens again for 0.5 s if two of
        // them failed (the store's new connection may still be opening): one exact decision is not
        // yet recovery. Three in a row are: the half-open round they end in closed the breaker.
        CompletableFuture<Long> limiterBack = CompletableFuture.supplyAsync(() -> firstSuccess(restarted, 3, () -> {
            HttpResponse<String> response =
                    http.get("/api/hello", TestJwts.token("restart-probe-" + System.nanoTime(), null));
            return response.headers().firstValue("X-RateLimit-Degraded").isEmpty()
                    && response.headers().firstValue("X-RateLimit-Remaining").isPresent();
        }));
        long templateMillis = templateBack.get(2, TimeUnit.MINUTES);
        long limiterMillis = limiterBack.get(2, TimeUnit.MINUTES);
        System.out.printf(
                Locale.ROOT,
                "After the restart: the application's template recovered in %d ms, the limiter (three exact"
                        + " decisions in a row) in %d ms, measured from the restarted Redis answering PING%n",
                templateMillis,
                limiterMillis);

        assertThat(limiterMillis)
                .as("the limiter decides exactly again within its documented recovery bound")
                .isLessThan(LIMITER_RECOVERY_BOUND.toMillis());
        assertThat(template.opsForValue().get("application:greeting")).isEqualTo("again");
        // the limiter decides exactly again: a fresh user gets its five, then 429
        String after = TestJwts.token("restart-after", null);
        for (int remaining = 4; remaining >= 0; remaining--) {
            HttpResponse<String> response = http.get("/api/hello", after);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("X-RateLimit-Degraded")).isEmpty();
            assertThat(response.headers().firstValue("X-RateLimit-Remaining")).hasValue(Integer.toString(remaining));
        }
        assertThat(http.get("/api/hello", after).statusCode()).isEqualTo(429);
    }

    /**
     * Tries {@code attempt} until it has returned true {@code inARow} times in a row and gives the
     * milliseconds from {@code since} to the last of them; a failure or false starts the count again
     * 10 ms later (recovery is the point here, so real time passes).
     */
    private static long firstSuccess(long since, int inARow, Callable<Boolean> attempt) {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        int successes = 0;
        while (System.nanoTime() < deadline) {
            try {
                if (attempt.call()) {
                    if (++successes == inARow) {
                        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
                    }
                    continue;
                }
            } catch (Exception e) {
                // not back yet
            }
            successes = 0;
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new AssertionError("not recovered within a minute of the restart");
    }
}
