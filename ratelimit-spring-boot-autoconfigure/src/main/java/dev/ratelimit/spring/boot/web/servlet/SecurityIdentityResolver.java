package dev.ratelimit.spring.boot.web.servlet;

import dev.ratelimit.servlet.IdentityResolver;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.internal.Callers;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import org.jspecify.annotations.Nullable;

/**
 * The default {@link IdentityResolver} of the servlet stack: the authenticated caller's name (Spring
 * Security's {@code Authentication#getName}, else the container's principal) and the tier the {@link
 * TierResolver} finds on it; anonymous callers are left to the filter, which limits them by address.
 */
final class SecurityIdentityResolver implements IdentityResolver {

    private final TierResolver tiers;

    /**
     * Creates the resolver.
     *
     * @param tiers finds the tier of an authenticated caller
     */
    SecurityIdentityResolver(TierResolver tiers) {
        this.tiers = tiers;
    }

    @Override
    public @Nullable Identity resolve(HttpServletRequest request) {
        Principal principal = Callers.current(request.getUserPrincipal());
        if (principal == null || !Callers.authenticated(principal)) {
            return null;
        }
        return new Identity(principal.getName(), tiers.resolveTier(principal));
    }
}
