package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Tells {@link RateLimitFilter} whose budget a request is charged to and which tier applies.
 *
 * <p>A resolver must take identity and tier from something the server established (an
 * authentication filter's request attributes, the container's authenticated principal), never
 * from a value the client can set freely such as a query parameter or an {@code X-Forwarded-For}
 * header. Returning {@code null} marks the request as anonymous: the filter then limits it by the
 * client address the container reports ({@link HttpServletRequest#getRemoteAddr()}) under the
 * policy's default tier.
 *
 * <pre>{@code
 * // the container's authenticated principal, tier from a role
 * IdentityResolver byPrincipal = request -> request.getUserPrincipal() == null
 *         ? null
 *         : new IdentityResolver.Identity(
 *                 request.getUserPrincipal().getName(), request.isUserInRole("pro") ? "pro" : "free");
 * }</pre>
 *
 * <p>Implementations are called once per checked request, on the request's thread, and must be
 * thread-safe.
 */
@FunctionalInterface
public interface IdentityResolver {

    /**
     * Returns the identity a request is charged to, or {@code null} for an anonymous request.
     *
     * @param request the request being checked
     * @return the identity, or {@code null} to limit the request by its client address
     */
    @Nullable
    Identity resolve(HttpServletRequest request);

    /**
     * Returns the default resolver: the user from the request attribute {@value
     * RateLimitFilter#USER_ATTRIBUTE} and the tier name from {@value
     * RateLimitFilter#TIER_ATTRIBUTE}, both set by an authentication filter that runs first.
     *
     * @return the resolver reading the default attributes
     */
    static IdentityResolver requestAttributes() {
        return requestAttributes(RateLimitFilter.USER_ATTRIBUTE, RateLimitFilter.TIER_ATTRIBUTE);
    }

    /**
     * Returns a resolver reading the user and the tier name from the given request attributes.
     *
     * <p>An attribute's value is taken through {@link Object#toString()}; a missing or blank user
     * makes the request anonymous, a missing tier selects the policy's default tier.
     *
     * @param userAttribute the name of the attribute holding the user id
     * @param tierAttribute the name of the attribute holding the tier name
     * @return the resolver
     */
    static IdentityResolver requestAttributes(String userAttribute, String tierAttribute) {
        Objects.requireNonNull(userAttribute, "userAttribute must not be null");
        Objects.requireNonNull(tierAttribute, "tierAttribute must not be null");
        return request -> {
            Object user = request.getAttribute(userAttribute);
            if (user == null) {
                return null;
            }
            String userId = user.toString();
            if (userId.isBlank()) {
                return null;
            }
            Object tier = request.getAttribute(tierAttribute);
            return new Identity(userId, tier == null ? null : tier.toString());
        };
    }

    /**
     * Who a request is charged to.
     *
     * @param userId the budget's key; not empty. Distinct users must have distinct ids; anonymous
     *     requests use {@code ip:<address>}, so user ids should not take that form
     * @param tier the tier's name, resolved through the filter's {@link dev.ratelimit.api.TierPolicy}
     *     (unknown or {@code null}: the default tier)
     */
    record Identity(String userId, @Nullable String tier) {

        /**
         * Validates the components.
         *
         * @param userId the budget's key; not empty. Distinct users must have distinct ids; anonymous
         *     requests use {@code ip:<address>}, so user ids should not take that form
         * @param tier the tier's name, resolved through the filter's {@link dev.ratelimit.api.TierPolicy}
         *     (unknown or {@code null}: the default tier)
         * @throws NullPointerException if {@code userId} is {@code null}
         * @throws IllegalArgumentException if {@code userId} is empty
         */
        public Identity {
            Objects.requireNonNull(userId, "userId must not be null");
            if (userId.isEmpty()) {
                throw new IllegalArgumentException("userId must not be empty");
            }
        }
    }
}
