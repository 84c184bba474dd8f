package dev.ratelimit.spring.boot.web.internal;

import java.security.Principal;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/** Finds the authenticated caller without a hard dependency on Spring Security. Not API. */
public final class Callers {

    private static final boolean SECURITY = ClassUtils.isPresent(
            "org.springframework.security.core.context.SecurityContextHolder", Callers.class.getClassLoader());

    private Callers() {}

    /**
     * Returns the authenticated caller of the current thread (servlet stack): Spring Security's
     * authentication when there is one and it is not anonymous, else the container's principal.
     *
     * @param containerPrincipal the request's {@code getUserPrincipal()}
     * @return the caller, or {@code null} when anonymous
     */
    public static @Nullable Principal current(@Nullable Principal containerPrincipal) {
        if (SECURITY) {
            Principal authentication = SecurityTiers.current();
            if (authentication != null) {
                return authentication;
            }
        }
        return containerPrincipal;
    }

    /**
     * Tells whether a principal stands for an authenticated caller: not Spring Security's anonymous
     * or unauthenticated token, and with a name.
     *
     * @param principal the principal
     * @return whether it is authenticated
     */
    public static boolean authenticated(@Nullable Principal principal) {
        if (principal == null
                || principal.getName() == null
                || principal.getName().isBlank()) {
            return false;
        }
        return !SECURITY || SecurityTiers.authenticatedPrincipal(principal);
    }
}
