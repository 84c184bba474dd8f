package dev.ratelimit.api;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/** Argument checks whose messages name the argument. */
final class Checks {

    private Checks() {}

    static <T> T notNull(@Nullable T value, String name) {
        if (value == null) {
            throw new NullPointerException(name + " must not be null");
        }
        return value;
    }

    static String notBlank(@Nullable String value, String name) {
        String checked = notNull(value, name);
        if (checked.isBlank()) {
            throw new IllegalArgumentException(name + " must not be empty or blank");
        }
        return checked;
    }

    static long positive(long value, String name) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be at least 1, was " + value);
        }
        return value;
    }

    static Duration windowLength(@Nullable Duration length, String name) {
        Duration checked = notNull(length, name);
        if (checked.isNegative() || checked.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, was " + checked);
        }
        if (checked.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException(name + " must be at least one second, was " + checked);
        }
        if (checked.getNano() != 0) {
            throw new IllegalArgumentException(name + " must be a whole number of seconds, was " + checked);
        }
        return checked;
    }

    /** Tokens as amounts, refusing a negative count with a message naming the argument. */
    static Amounts tokens(long tokens, String name) {
        if (tokens < 0) {
            throw new IllegalArgumentException(name + " must not be negative, was " + tokens);
        }
        return Amounts.tokens(tokens);
    }
}
