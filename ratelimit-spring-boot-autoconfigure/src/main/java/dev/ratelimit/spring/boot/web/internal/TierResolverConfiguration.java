package dev.ratelimit.spring.boot.web.internal;

import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.PrincipalTierResolver;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The tier resolver bean both web stacks' auto-configurations import. Not API. */
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
