package dev.ratelimit.spring.boot.web.reactive;

import java.security.Principal;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who a request is charged to, on the WebFlux stack (the servlet stack uses {@code
 * IdentityResolver.Identity}).
 *
 * @param userId the authenticated caller's id (Spring Security's {@code Authentication#getName}); not
 *     empty
 * @param tier the tier's name; {@code null} or unknown: the default tier
 * @param principal the principal, for {@code @RateLimited} keys
 */
public record Caller(
        String userId, @Nullable String tier, @Nullable Principal principal) {

    /**
     * Validates the components.
     *
     * @param userId the authenticated caller's id (Spring Security's {@code Authentication#getName}); not
     *     empty
     * @param tier the tier's name; {@code null} or unknown: the default tier
     * @param principal the principal, for {@code @RateLimited} keys
     * @throws IllegalArgumentException if {@code userId} is empty
     */
    public Caller {
        Objects.requireNonNull(userId, "userId must not be null");
        if (userId.isEmpty()) {
            throw new IllegalArgumentException("userId must not be empty");
        }
    }
}
