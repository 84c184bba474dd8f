package dev.ratelimit.http;

import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The budget keys of callers, so that every web stack keys them alike: anonymous callers by the
 * client address the server reports ({@code ip:<address>}), authenticated ones by id, escaped out
 * of the anonymous namespace so that no user can spend an address's budget.
 */
public final class CallerKeys {

    /** The prefix of the budget key of an anonymous request, followed by the client address. */
    public static final String ANONYMOUS_PREFIX = "ip:";

    private CallerKeys() {}

    /**
     * Returns an authenticated caller's key: the id, with a leading backslash when it starts with
     * {@value #ANONYMOUS_PREFIX} or a backslash, so user {@code "ip:10.0.0.5"} never shares a budget
     * with anonymous callers from 10.0.0.5.
     *
     * @param userId the id
     * @return the key
     */
    public static String authenticated(String userId) {
        Objects.requireNonNull(userId, "userId must not be null");
        return userId.startsWith(ANONYMOUS_PREFIX) || userId.startsWith("\\") ? "\\" + userId : userId;
    }

    /**
     * Returns an anonymous caller's key.
     *
     * @param address the client address the server reports; {@code null} or empty: {@code unknown}
     * @return {@code ip:<address>}
     */
    public static String anonymous(@Nullable String address) {
        return ANONYMOUS_PREFIX + (address == null || address.isEmpty() ? "unknown" : address);
    }

    /**
     * Returns the budget key and tier of a caller: an authenticated one's id (escaped) and the tier
     * its resolver named, or an anonymous one's address and the default tier.
     *
     * @param userId the authenticated caller's id, or {@code null} when anonymous
     * @param tier the tier the identity names, or {@code null}
     * @param address the client address, for anonymous callers
     * @param policy resolves the tier
     * @return the key and tier
     */
    public static Subject subject(
            @Nullable String userId, @Nullable String tier, @Nullable String address, TierPolicy policy) {
        Objects.requireNonNull(policy, "policy must not be null");
        return userId == null
                ? new Subject(anonymous(address), policy.defaultTier())
                : new Subject(authenticated(userId), policy.resolve(tier));
    }

    /**
     * Whom a request is counted against.
     *
     * @param key the budget key
     * @param tier the caller's tier
     */
    public record Subject(String key, Tier tier) {

        /**
         * Validates the components.
         *
         * @param key the budget key
         * @param tier the caller's tier
         * @throws NullPointerException if either is {@code null}
         */
        public Subject {
            Objects.requireNonNull(key, "key must not be null");
            Objects.requireNonNull(tier, "tier must not be null");
        }
    }
}
