package dev.ratelimit.spring.boot;

import java.security.Principal;
import org.jspecify.annotations.Nullable;

/**
 * Finds the tier of an authenticated caller. The default reads the claim {@code
 * ratelimit.identity.tier-claim} ({@code plan}) of a JWT or OAuth2 principal, else the first granted
 * authority starting with {@code ratelimit.identity.tier-authority-prefix} ({@code TIER_}); define a
 * bean of this type to replace it, on either web stack.
 */
@FunctionalInterface
public interface TierResolver {

    /**
     * Returns the caller's tier name, or {@code null} for the default tier. An unknown name also
     * selects the default tier (logged once).
     *
     * @param principal the authenticated caller: with Spring Security, its {@code Authentication}
     * @return the tier's name, or {@code null}
     */
    @Nullable
    String resolveTier(Principal principal);
}
