package dev.ratelimit.redis.internal;

import dev.ratelimit.api.RateLimiterUnavailableException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Turns driver failures into {@link RateLimiterUnavailableException}, the one failure of the port. */
public final class RedisFailures {

    private RedisFailures() {}

    /**
     * Wraps a failure, unwrapping {@link CompletionException} and {@link ExecutionException} first;
     * a {@link RateLimiterUnavailableException} is returned as is.
     *
     * @param store the store's name for the message, for example {@code "Lettuce"}
     * @param failure the driver's failure
     * @return the exception to throw or complete with
     */
    public static RateLimiterUnavailableException unavailable(String store, Throwable failure) {
        Throwable cause = unwrap(failure);
        if (cause instanceof RateLimiterUnavailableException e) {
            return e;
        }
        return new RateLimiterUnavailableException(
                "Redis (" + store + ") is unavailable: " + cause.getClass().getSimpleName() + ": " + cause.getMessage(),
                cause);
    }

    /**
     * Strips {@link CompletionException} and {@link ExecutionException} wrappers.
     *
     * @param failure a failure
     * @return the innermost failure that is not such a wrapper
     */
    public static Throwable unwrap(Throwable failure) {
        Throwable current = failure;
        while ((current instanceof CompletionException || current instanceof ExecutionException)
                && current.getCause() != null) {
            current = current.getCause();
        }
        return current;
    }
}
