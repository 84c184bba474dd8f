package dev.ratelimit.spring.boot.web.internal;

import java.util.Map;
import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.ClaimAccessor;
import org.springframework.security.oauth2.core.OAuth2AuthenticatedPrincipal;

/** The claims of a JWT or OAuth2 principal; loaded only when spring-security-oauth2-core is on the class path. */
final class OAuth2Claims {

    private OAuth2Claims() {}

    static Map<String, Object> of(Authentication authentication) {
        Object principal = authentication.getPrincipal();
        if (principal instanceof ClaimAccessor claims) {
            return claims.getClaims();
        }
        if (principal instanceof OAuth2AuthenticatedPrincipal oauth2) {
            return oauth2.getAttributes();
        }
        return Map.of();
    }
}
