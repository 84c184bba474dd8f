package dev.ratelimit.spring.boot.web.internal;

import java.security.Principal;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.util.ClassUtils;

/** What Spring Security knows of a caller; loaded only when Spring Security is on the class path. Not API. */
public final class SecurityTiers {

    private static final boolean OAUTH2 = ClassUtils.isPresent(
            "org.springframework.security.oauth2.core.ClaimAccessor", SecurityTiers.class.getClassLoader());

    private SecurityTiers() {}

    /** Whether the authentication stands for an authenticated caller (not Spring Security's anonymous one). */
    static boolean authenticated(@Nullable Authentication authentication) {
        return authentication != null
                && authentication.isAuthenticated()
                && !(authentication instanceof AnonymousAuthenticationToken);
    }

    /** Whether a principal is authenticated: any principal that is not a Spring Security token, or an authenticated one. */
    static boolean authenticatedPrincipal(Principal principal) {
        return !(principal instanceof Authentication authentication) || authenticated(authentication);
    }

    /** The authenticated caller of the current thread's security context, or {@code null}. */
    static @Nullable Authentication current() {
        Authentication authentication = org.springframework.security.core.context.SecurityContextHolder.getContext()
                .getAuthentication();
        return authenticated(authentication) ? authentication : null;
    }

    /**
     * Returns the tier a principal names: its claim {@code claim} (JWT or OAuth2), else the first
     * granted authority starting with {@code authorityPrefix}, less the prefix.
     *
     * @param principal the principal
     * @param claim the claim's name; empty: none
     * @param authorityPrefix the authorities' prefix; empty: none
     * @return the tier's name, or {@code null}
     */
    public static @Nullable String tier(Principal principal, String claim, String authorityPrefix) {
        if (!(principal instanceof Authentication authentication)) {
            return null;
        }
        if (!claim.isEmpty() && OAUTH2) {
            Map<String, Object> claims = OAuth2Claims.of(authentication);
            Object value = claims.get(claim);
            if (value != null && !value.toString().isBlank()) {
                return value.toString();
            }
        }
        if (!authorityPrefix.isEmpty()) {
            for (GrantedAuthority authority : authentication.getAuthorities()) {
                String name = authority.getAuthority();
                if (name != null && name.startsWith(authorityPrefix) && name.length() > authorityPrefix.length()) {
                    return name.substring(authorityPrefix.length());
                }
            }
        }
        return null;
    }
}
