package dev.ratelimit.spring.boot.web.servlet;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.servlet.IdentityResolver;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.spring.boot.RateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.TierResolverConfiguration;
import jakarta.servlet.DispatcherType;
import java.time.Clock;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The servlet stack: {@link RateLimitFilter} registered after Spring Security's filter chain, the
 * caller from Spring Security, and {@code @RateLimited} on Spring MVC handlers.
 */
@AutoConfiguration(
        after = RateLimitAutoConfiguration.class,
        afterName = "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({RateLimitFilter.class, jakarta.servlet.Filter.class, FilterRegistrationBean.class})
@ConditionalOnBean(RateLimiter.class)
@Import(TierResolverConfiguration.class)
public class ServletRateLimitAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public ServletRateLimitAutoConfiguration() {}

    /**
     * Finds the caller: the authenticated principal's name and tier, or anonymous.
     *
     * @param tiers finds the tier
     * @return the resolver
     */
    @Bean
    @ConditionalOnMissingBean
    public IdentityResolver rateLimitIdentityResolver(TierResolver tiers) {
        return new SecurityIdentityResolver(tiers);
    }

    /**
     * The filter, on {@code ratelimit.paths} less {@code ratelimit.exclude-paths}, ordered {@code
     * ratelimit.filter.order} (after Spring Security's chain at -100).
     *
     * @param limiter the limiter
     * @param policy the tiers
     * @param identities finds the caller
     * @param properties the settings
     * @return the registration
     */
    @Bean
    @ConditionalOnProperty(name = "ratelimit.filter.enabled", matchIfMissing = true)
    @ConditionalOnMissingBean(name = "rateLimitFilter")
    public FilterRegistrationBean<RateLimitFilter> rateLimitFilter(
            RateLimiter limiter, TierPolicy policy, IdentityResolver identities, RateLimitProperties properties) {
        RateLimitProperties.Headers headers = properties.getHeaders();
        RateLimitFilter.Builder filter = RateLimitFilter.builder(limiter, policy)
                .identityResolver(identities)
                .exemptPaths(properties.getExcludePaths().toArray(String[]::new))
                .exemptMethods(properties.getExemptMethods().toArray(String[]::new))
                .enforce(!properties.isShadowMode())
                .openAiErrors(headers.isOpenaiErrors())
                .unavailableRetryAfter(properties.getUnavailableRetryAfter())
                .clock(Clock.systemUTC()); // the Anthropic family's reset times, as the limiter's own clock
        for (HeaderFamily family : HeaderFamily.values()) {
            filter.header(family, headers.getFamilies().contains(family));
        }
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter.build());
        registration.setName("rateLimitFilter");
        registration.setUrlPatterns(properties.getPaths());
        registration.setDispatcherTypes(DispatcherType.REQUEST);
        registration.setOrder(properties.getFilter().getOrder());
        return registration;
    }

    /** {@code @RateLimited} on Spring MVC handler methods. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(WebMvcConfigurer.class)
    static class Mvc {

        @Bean
        WebMvcConfigurer rateLimitedWebMvcConfigurer(
                RateLimiter limiter, TierPolicy policy, IdentityResolver identities, RateLimitProperties properties) {
            RateLimitedInterceptor interceptor = new RateLimitedInterceptor(limiter, policy, identities, properties);
            return new WebMvcConfigurer() {
                @Override
                public void addInterceptors(InterceptorRegistry registry) {
                    registry.addInterceptor(interceptor);
                }
            };
        }
    }
}
