package dev.ratelimit.spring.cloud.gateway;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.RetryAfter;
import dev.ratelimit.spring.boot.RateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.RateLimitStoreInfo;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.TierResolverConfiguration;
import java.time.Clock;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Primary;
import reactor.core.publisher.Mono;

/**
 * When Spring Cloud Gateway (server-webflux) is on the class path: a {@link TieredRateLimiter} bean,
 * primary, so that the {@code RequestRateLimiter} filter uses it instead of the gateway's {@code
 * RedisRateLimiter}. Switched off by {@code ratelimit.spring-cloud-gateway.enabled=false}; backs off
 * when the application defines its own {@link TieredRateLimiter}.
 *
 * <p>It runs before the gateway's auto-configuration, whose filter factory needs a rate limiter
 * bean to exist, and after {@link RateLimitAutoConfiguration}, whose limiter it uses.
 */
@AutoConfiguration(
        after = RateLimitAutoConfiguration.class,
        beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass({AbstractRateLimiter.class, Mono.class})
@ConditionalOnBean(RateLimiter.class)
@ConditionalOnProperty(name = "ratelimit.spring-cloud-gateway.enabled", matchIfMissing = true)
@Import(TierResolverConfiguration.class)
public class RateLimitGatewayAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public RateLimitGatewayAutoConfiguration() {}

    /**
     * The gateway's rate limiter over the library's, with the tiers, the tier resolver, the headers
     * of {@code ratelimit.headers.*} and shadow mode of {@code ratelimit.*}.
     *
     * @param limiter the library's limiter
     * @param policy the tiers
     * @param tiers finds the tier of a key on routes that name none
     * @param stores what the auto-configured store is, if it is one
     * @param properties the settings
     * @param configurationService the gateway's, binding the routes' arguments
     * @return the limiter
     */
    @Bean
    @Primary
    @ConditionalOnMissingBean
    public TieredRateLimiter tieredRateLimiter(
            RateLimiter limiter,
            TierPolicy policy,
            TierResolver tiers,
            ObjectProvider<RateLimitStoreInfo> stores,
            RateLimitProperties properties,
            ConfigurationService configurationService) {
        RateLimitStoreInfo store = stores.getIfUnique();
        RateLimitResponses responses = RateLimitResponses.builder()
                .headers(properties.getHeaders().getFamilies())
                .clock(Clock.systemUTC()) // the Anthropic family's reset times
                .unavailableRetryAfter(Duration.ofSeconds(RetryAfter.seconds(properties.getUnavailableRetryAfter())))
                .build();
        return TieredRateLimiter.builder(limiter, policy)
                .tierResolver(tiers)
                .responses(responses)
                .shadowMode(properties.isShadowMode())
                // a store the auto-configuration did not create may block: its checks run off the event loop
                .offload(store == null || !store.nonBlocking())
                .configurationService(configurationService)
                .build();
    }
}
