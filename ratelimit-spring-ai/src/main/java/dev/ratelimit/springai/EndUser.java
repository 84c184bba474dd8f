package dev.ratelimit.springai;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The end user a model call is charged to.
 *
 * @param id the user's id, the key of their windows; not blank
 * @param tier the name of the user's tier in the advisor's {@code TierPolicy}; {@code null} or an
 *     unknown name selects the policy's default tier
 */
public record EndUser(String id, @Nullable String tier) {

    /**
     * Validates the components.
     *
     * @param id the user's id, the key of their windows; not blank
     * @param tier the name of the user's tier in the advisor's {@code TierPolicy}; {@code null} or an
     *     unknown name selects the policy's default tier
     * @throws IllegalArgumentException if {@code id} is blank
     */
    public EndUser {
        Objects.requireNonNull(id, "id");
        if (id.isBlank()) {
            throw new IllegalArgumentException("the end user's id must not be blank");
        }
    }
}
