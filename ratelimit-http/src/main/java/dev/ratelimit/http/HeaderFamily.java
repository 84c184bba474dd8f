package dev.ratelimit.http;

/**
 * A family of rate-limit response headers that {@link RateLimitResponses} can write; a front
 * switches each on or off.
 */
public enum HeaderFamily {

    /**
     * {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and {@code X-RateLimit-Window} of
     * the deciding window, and {@code X-RateLimit-Degraded: true} while the limiter fails open.
     */
    X_RATELIMIT,

    /**
     * The IETF httpapi draft's {@code RateLimit-Policy} (every window of the caller's tier, shortest
     * first) and {@code RateLimit} (remaining and seconds until the budget grows again).
     */
    IETF,

    /**
     * OpenAI's {@code x-ratelimit-limit-requests}, {@code x-ratelimit-remaining-requests} and {@code
     * x-ratelimit-reset-requests} (and the same for {@code -tokens} where a front reports each
     * unit), {@code retry-after-ms} on a 429, and, without {@link #X_RATELIMIT}, {@code
     * x-ratelimit-window} naming the window that tripped and {@code X-RateLimit-Degraded}.
     */
    OPENAI,

    /**
     * Anthropic's {@code anthropic-ratelimit-requests-limit}, {@code -remaining} and {@code -reset}
     * (an RFC 3339 time, whole seconds, rounded up), and the same for {@code -tokens-}, {@code
     * -input-tokens-} and {@code -output-tokens-} where a front reports token windows (a token
     * window counts input and output together, so all three report it), {@code retry-after-ms} on a
     * 429, and {@code X-RateLimit-Degraded}.
     */
    ANTHROPIC
}
