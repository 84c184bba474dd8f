package dev.ratelimit.spring.boot;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * Creates the {@link RateLimiter}, its {@link TierPolicy} and its store from {@code ratelimit.*}.
 * Each backs off when the application defines its own bean of that type.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
        })
@EnableConfigurationProperties(RateLimitProperties.class)
@Import({StoreConfigurations.Lettuce.class, StoreConfigurations.Jedis.class, StoreConfigurations.InMemory.class})
public class RateLimitAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RateLimitAutoConfiguration() {}

    /**
     * The tiers of {@code ratelimit.tiers} and {@code ratelimit.default-tier}, or the built-in ones.
     *
     * @param properties the settings
     * @return the policy
     */
    @Bean
    @ConditionalOnMissingBean
    public TierPolicy rateLimitTierPolicy(RateLimitProperties properties) {
        return properties.tierPolicy();
    }

    /**
     * The limiter over the store, with the kill switch, fail-open, the circuit breaker and the
     * application's {@link MeterRegistry}.
     *
     * @param stores the store
     * @param properties the settings
     * @param meterRegistries the application's registry, if it has one
     * @return the limiter
     */
    @Bean
    @ConditionalOnMissingBean
    public RateLimiter rateLimiter(
            ObjectProvider<WindowStore> stores,
            RateLimitProperties properties,
            ObjectProvider<MeterRegistry> meterRegistries) {
        WindowStore store = stores.getIfAvailable();
        if (store == null) {
            throw new IllegalStateException("No rate-limit store: ratelimit.store="
                    + (properties.getStore() == null ? "in-memory (the default)" : properties.getStore())
                    + " needs its module on the class path: dev.ratelimit:ratelimit-inmemory;"
                    + " ratelimit-redis-lettuce with io.lettuce:lettuce-core; or ratelimit-redis-jedis with"
                    + " redis.clients:jedis; the Redis stores also need"
                    + " org.springframework.boot:spring-boot-data-redis. Or define a WindowStore bean.");
        }
        RateLimitProperties.CircuitBreaker breaker = properties.getCircuitBreaker();
        SlidingWindowRateLimiter.Builder builder = SlidingWindowRateLimiter.builder(store)
                .name(properties.getName())
                .failOpen(properties.isFailOpen())
                .expectedInstances(properties.getExpectedInstances())
                .rejectionCache(properties.isRejectionCache())
                .circuitBreaker(CircuitBreakerConfig.custom()
                        .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                        .slidingWindowSize(breaker.getSlidingWindowSize())
                        .minimumNumberOfCalls(breaker.getMinimumNumberOfCalls())
                        .failureRateThreshold(breaker.getFailureRateThreshold())
                        .slowCallDurationThreshold(breaker.getSlowCallDurationThreshold())
                        .slowCallRateThreshold(breaker.getSlowCallRateThreshold())
                        .waitDurationInOpenState(breaker.getWaitDurationInOpenState())
                        .permittedNumberOfCallsInHalfOpenState(breaker.getPermittedNumberOfCallsInHalfOpenState())
                        .recordExceptions(RuntimeException.class)
                        .build());
        if (!properties.isEnabled()) {
            // only ever switch it on here: left alone, RATE_LIMIT_DISABLED and -Dratelimit.disabled still apply
            builder.disabled(true);
        }
        MeterRegistry registry = meterRegistries.getIfUnique();
        if (registry != null) {
            builder.metrics(MicrometerLimiterMetrics.of(registry));
        }
        return builder.build();
    }

    /**
     * Waits, when the application stops (after the web server has stopped taking requests, before
     * any bean is destroyed), up to {@link SettlementDrain#TIMEOUT} for the settlements the store did
     * not take at once to reach it.
     *
     * @param rateLimiter the limiter
     * @return the lifecycle bean
     */
    @Bean
    SettlementDrain rateLimitSettlementDrain(RateLimiter rateLimiter) {
        return new SettlementDrain(rateLimiter);
    }

    /** Drains the limiter's queued settlements in the stop phase, after the web server's. */
    static final class SettlementDrain implements SmartLifecycle {

        static final Duration TIMEOUT = Duration.ofSeconds(10);

        private final RateLimiter limiter;
        private volatile boolean running;

        SettlementDrain(RateLimiter limiter) {
            this.limiter = limiter;
        }

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            running = false;
            try {
                if (!limiter.awaitSettlements(TIMEOUT)) {
                    System.getLogger(RateLimitAutoConfiguration.class.getName())
                            .log(
                                    System.Logger.Level.WARNING,
                                    "Rate-limit settlements still waiting for the store after {0}: they are given up",
                                    TIMEOUT);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            // lower than the web server's graceful shutdown (DEFAULT_PHASE - 1024) and stop (- 2048):
            // stopped after them, when no request settles any more
            return SmartLifecycle.DEFAULT_PHASE - 4096;
        }
    }
}
