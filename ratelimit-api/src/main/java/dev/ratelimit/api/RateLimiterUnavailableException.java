package dev.ratelimit.api;

/**
 * Thrown when the limiter cannot reach a decision because its store is unavailable and it is
 * configured to fail closed; stores raise it for every driver failure so that no driver exception
 * type crosses the API.
 */
public class RateLimiterUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was unavailable
     */
    public RateLimiterUnavailableException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what was unavailable
     * @param cause the underlying failure
     */
    public RateLimiterUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
