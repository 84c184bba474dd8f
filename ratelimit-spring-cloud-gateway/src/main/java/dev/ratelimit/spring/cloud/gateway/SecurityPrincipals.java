package dev.ratelimit.spring.cloud.gateway;

import java.security.Principal;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import reactor.core.publisher.Mono;

/** Spring Security's side, loaded only when it is on the class path. */
final class SecurityPrincipals {

    private SecurityPrincipals() {}

    /**
     * The authenticated caller of the request being filtered when its name is the key, as the
     * gateway's {@code PrincipalNameKeyResolver} resolves it; empty otherwise (anonymous, or a key
     * that is not the caller's name, such as an API key header).
     */
    static Mono<Principal> authenticatedAs(String key) {
        return ReactiveSecurityContextHolder.getContext()
                .mapNotNull(SecurityContext::getAuthentication)
                .filter(authentication -> authenticated(authentication) && key.equals(authentication.getName()))
                .cast(Principal.class);
    }

    private static boolean authenticated(Authentication authentication) {
        return authentication.isAuthenticated() && !(authentication instanceof AnonymousAuthenticationToken);
    }
}
