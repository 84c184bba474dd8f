package dev.ratelimit.http;

import java.time.Duration;
import java.util.Objects;

/**
 * The rounding of a retry delay for HTTP: {@code Retry-After} in whole seconds (RFC 9110) and
 * {@code retry-after-ms}, which OpenAI's and Anthropic's SDKs read first to wait to the millisecond.
 * Both round up, so a client that honours them never retries early.
 */
public final class RetryAfter {

    private RetryAfter() {}

    /**
     * Returns the value of {@code Retry-After}: the delay rounded up to whole seconds, at least 1.
     *
     * @param delay the delay
     * @return the seconds
     * @throws NullPointerException if {@code delay} is {@code null}
     */
    public static long seconds(Duration delay) {
        return Math.max(1, ceilSeconds(Objects.requireNonNull(delay, "delay must not be null")));
    }

    /**
     * Returns the value of {@code retry-after-ms}: the delay rounded up to whole milliseconds, at
     * least 1.
     *
     * @param delay the delay
     * @return the milliseconds
     * @throws NullPointerException if {@code delay} is {@code null}
     */
    public static long millis(Duration delay) {
        Objects.requireNonNull(delay, "delay must not be null");
        long millis = delay.toMillis() + (delay.toNanosPart() % 1_000_000 > 0 ? 1 : 0);
        return Math.max(1, millis);
    }

    /** Rounds up to whole seconds; zero stays zero. */
    static long ceilSeconds(Duration duration) {
        return duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
    }
}
