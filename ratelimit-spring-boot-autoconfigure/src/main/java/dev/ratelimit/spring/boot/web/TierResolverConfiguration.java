package dev.ratelimit.spring.boot.web;

import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.TierResolver;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link TierResolver} bean that both web stacks' auto-configurations import: {@link
 * PrincipalTierResolver} unless the application defines its own.
 */
@Configuration(proxyBeanMethods = false)
public class TierResolverConfiguration {

    /** Creates the configuration; Spring calls it. */
    public TierResolverConfiguration() {}

    /**
     * Finds a caller's tier on the authenticated principal.
     *
     * @param properties the settings
     * @return the resolver
     */
    @Bean
    @ConditionalOnMissingBean
    public TierResolver rateLimitTierResolver(RateLimitProperties properties) {
        return new PrincipalTierResolver(properties.getIdentity());
    }
}
