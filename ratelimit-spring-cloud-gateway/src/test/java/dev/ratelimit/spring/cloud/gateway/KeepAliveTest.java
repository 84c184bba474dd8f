package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.gateway.ApiGatewayApplication;
import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;

/**
 * One keep-alive connection stays served while the limiter's answers alternate between coming later,
 * on another thread (as Redis answers), and at once (as the rejection cache, the in-memory store and
 * a fail-closed limiter while Redis is down answer). Reactor Netty 1.3.6, the version Spring Boot
 * 4.0.7 brings, now and then stops reading such a connection: a request that arrives while the
 * previous exchange is still being completed is queued, and once it is answered at once nothing
 * reads the connection again, so the client waits until its own timeout. 1.3.8 reads it again; the
 * build tests against 1.3.8 (see docs/spring-boot.md).
 */
@SpringBootTest(
        classes = ApiGatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"ratelimit.store=in-memory", GatewayApplication.WITHOUT_SECURITY})
@Import(KeepAliveTest.AlternatingAnswers.class)
class KeepAliveTest extends GatewayApplication {

    private static final int REFUSALS = 400;

    @Test
    void theConnectionIsReadAgainAfterAnswersThatCameLaterAndAnswersThatCameAtOnce() {
        Http http = http();
        String key = "keep-alive";
        for (int i = 0; i < 5; i++) {
            assertThat(http.get("/api/hello", key).statusCode()).isEqualTo(200);
        }
        for (int i = 0; i < REFUSALS; i++) {
            assertThat(http.get("/api/hello", key).statusCode())
                    .as("refusal %d", i)
                    .isEqualTo(429);
        }
        // each request checked once: the odd-numbered checks (203) answered later, the others (202) at once
        assertThat(Alternating.CHECKS.get()).isEqualTo(5 + REFUSALS);
        assertThat(Backend.requests(key)).isEqualTo(5);
    }

    /** The gateway's limiter (the name the routes refer to) over {@link Alternating}, on the event loop. */
    @TestConfiguration(proxyBeanMethods = false)
    static class AlternatingAnswers {

        @Bean
        @Primary
        TieredRateLimiter tieredRateLimiter(
                RateLimiter limiter, TierPolicy policy, ConfigurationService configurationService) {
            return TieredRateLimiter.builder(new Alternating(limiter), policy)
                    .offload(false)
                    .configurationService(configurationService)
                    .build();
        }
    }

    /**
     * The application's limiter (in-memory: it answers at once), answering every other check a
     * millisecond later on another thread.
     */
    private static final class Alternating implements RateLimiter {

        static final AtomicLong CHECKS = new AtomicLong();

        private static final Executor LATER = CompletableFuture.delayedExecutor(1, TimeUnit.MILLISECONDS);

        private final RateLimiter limiter;

        Alternating(RateLimiter limiter) {
            this.limiter = limiter;
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, List<Window> windows) {
            if (CHECKS.incrementAndGet() % 2 == 0) {
                return limiter.checkAsync(userId, windows);
            }
            return CompletableFuture.supplyAsync(() -> limiter.check(userId, windows), LATER);
        }

        @Override
        public CompletionStage<Decision> checkAsync(String userId, long limit, Duration window) {
            return checkAsync(userId, List.of(Window.of(limit, window)));
        }

        @Override
        public Decision check(String userId, long limit, Duration window) {
            return limiter.check(userId, limit, window);
        }

        @Override
        public Decision check(String userId, List<Window> windows) {
            return limiter.check(userId, windows);
        }

        @Override
        public Decision check(String userId, Tier tier) {
            return limiter.check(userId, tier);
        }

        @Override
        public Reservation reserve(String userId, Tier tier, Amounts estimate, List<SharedBudget> shared) {
            return limiter.reserve(userId, tier, estimate, shared);
        }

        @Override
        public CompletionStage<Reservation> reserveAsync(
                String userId, Tier tier, Amounts estimate, List<SharedBudget> shared) {
            return limiter.reserveAsync(userId, tier, estimate, shared);
        }

        @Override
        public List<Decision.Usage> usage(String userId, Tier tier) {
            return limiter.usage(userId, tier);
        }

        @Override
        public List<Decision.Usage> usage(SharedBudget budget) {
            return limiter.usage(budget);
        }
    }
}
