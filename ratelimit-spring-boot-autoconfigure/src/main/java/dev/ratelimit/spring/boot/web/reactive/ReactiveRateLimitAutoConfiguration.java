package dev.ratelimit.spring.boot.web.reactive;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.spring.boot.RateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.RateLimitStoreInfo;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.TierResolverConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/**
 * The WebFlux stack: {@link RateLimitWebFilter} after Spring Security's web filter chain, the caller
 * from the exchange's principal, and {@code @RateLimited} on WebFlux handlers.
 */
@AutoConfiguration(
        after = RateLimitAutoConfiguration.class,
        afterName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass({WebFilter.class, Mono.class})
@ConditionalOnBean(RateLimiter.class)
@Import(TierResolverConfiguration.class)
public class ReactiveRateLimitAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public ReactiveRateLimitAutoConfiguration() {}

    /**
     * Finds the caller: the exchange's authenticated principal, or anonymous.
     *
     * @param tiers finds the tier
     * @return the resolver
     */
    @Bean
    @ConditionalOnMissingBean
    public ReactiveIdentityResolver rateLimitReactiveIdentityResolver(TierResolver tiers) {
        return ReactiveIdentityResolver.principal(tiers);
    }

    /**
     * The filter, on {@code ratelimit.paths} less {@code ratelimit.exclude-paths}, ordered {@code
     * ratelimit.filter.order} (after Spring Security's web filter chain at -100).
     *
     * @param limiter the limiter
     * @param policy the tiers
     * @param identities finds the caller
     * @param stores what the auto-configured store is, if it is one
     * @param properties the settings
     * @return the filter
     */
    @Bean
    @ConditionalOnProperty(name = "ratelimit.filter.enabled", matchIfMissing = true)
    @ConditionalOnMissingBean
    public RateLimitWebFilter rateLimitWebFilter(
            RateLimiter limiter,
            TierPolicy policy,
            ReactiveIdentityResolver identities,
            ObjectProvider<RateLimitStoreInfo> stores,
            RateLimitProperties properties) {
        return new RateLimitWebFilter(limiter, policy, identities, properties, offload(stores));
    }

    /** A store the auto-configuration did not create may block: its checks run off the event loop. */
    static boolean offload(ObjectProvider<RateLimitStoreInfo> stores) {
        RateLimitStoreInfo store = stores.getIfUnique();
        return store == null || !store.nonBlocking();
    }

    /** {@code @RateLimited} on WebFlux handler methods. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(RequestMappingHandlerMapping.class)
    @ConditionalOnBean(name = "requestMappingHandlerMapping")
    static class Annotated {

        @Bean
        @ConditionalOnMissingBean
        RateLimitedWebFilter rateLimitedWebFilter(
                RateLimiter limiter,
                TierPolicy policy,
                ReactiveIdentityResolver identities,
                @Qualifier("requestMappingHandlerMapping") RequestMappingHandlerMapping requestMappingHandlerMapping,
                ObjectProvider<RateLimitStoreInfo> stores,
                RateLimitProperties properties) {
            return new RateLimitedWebFilter(
                    limiter, policy, identities, requestMappingHandlerMapping, properties, offload(stores));
        }
    }
}
