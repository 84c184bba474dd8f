package dev.ratelimit.spring.boot.web;

import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.internal.SecurityTiers;
import java.security.Principal;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * The default {@link TierResolver}: the claim {@code ratelimit.identity.tier-claim} of a JWT or
 * OAuth2 principal, else the first granted authority starting with {@code
 * ratelimit.identity.tier-authority-prefix}; {@code null} (the default tier) without Spring Security
 * or when neither is there.
 */
final class PrincipalTierResolver implements TierResolver {

    private static final boolean SECURITY = ClassUtils.isPresent(
            "org.springframework.security.core.Authentication", PrincipalTierResolver.class.getClassLoader());

    private final String claim;
    private final String authorityPrefix;

    /**
     * Creates the resolver.
     *
     * @param identity the {@code ratelimit.identity.*} settings
     */
    PrincipalTierResolver(RateLimitProperties.Identity identity) {
        this.claim = identity.getTierClaim().trim();
        this.authorityPrefix = identity.getTierAuthorityPrefix().trim();
    }

    @Override
    public @Nullable String resolveTier(Principal principal) {
        return SECURITY ? SecurityTiers.tier(principal, claim, authorityPrefix) : null;
    }

    @Override
    public String toString() {
        return "PrincipalTierResolver{claim='" + claim + "', authorityPrefix='" + authorityPrefix + "'}";
    }
}
