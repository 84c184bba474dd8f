package dev.ratelimit.spring.boot.actuate;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.spring.boot.RateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.RateLimitStoreInfo;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Actuator: the {@code rateLimit} health contributor and the {@code ratelimit} endpoint. */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnBean(RateLimiter.class)
public class RateLimitActuatorAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RateLimitActuatorAutoConfiguration() {}

    /** The health contributor, {@code management.health.ratelimit.enabled} (on by default). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    static class HealthConfiguration {

        @Bean
        @ConditionalOnEnabledHealthIndicator("ratelimit")
        @ConditionalOnMissingBean(name = "rateLimitHealthIndicator")
        HealthIndicator rateLimitHealthIndicator(
                RateLimiter limiter,
                TierPolicy policy,
                RateLimitProperties properties,
                ObjectProvider<RateLimitStoreInfo> stores,
                ObjectProvider<MeterRegistry> registries) {
            RateLimitStoreInfo store = stores.getIfUnique();
            return new RateLimitHealthIndicator(
                    limiter,
                    policy,
                    properties.getName(),
                    properties.isFailOpen(),
                    store == null ? null : store.type(),
                    registries.getIfUnique());
        }
    }

    /** The endpoint, where the application makes it available. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(
            name = {
                "org.springframework.boot.actuate.endpoint.annotation.Endpoint",
                "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"
            })
    static class EndpointConfiguration {

        @Bean
        @ConditionalOnAvailableEndpoint
        @ConditionalOnMissingBean
        RateLimitEndpoint rateLimitEndpoint(RateLimiter limiter, TierPolicy policy) {
            return new RateLimitEndpoint(limiter, policy);
        }
    }
}
