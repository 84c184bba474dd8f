package dev.ratelimit.http;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * The rounding of a retry delay for HTTP: {@code Retry-After} in whole seconds (RFC 9110) and
 * {@code retry-after-ms}, which OpenAI's and Anthropic's SDKs read first to wait to the millisecond,
 * and the {@code google.rpc.RetryInfo.retryDelay} of Google's error bodies ({@link #protobufDuration}).
 * All round up, so a client that honours them never retries early. {@link RateLimitResponses}
 * writes them on the refusals of the limiter; {@link #write} writes them on a refusal a front
 * answers itself, such as a 503 while it shuts down or a 429 while an upstream asked it to wait.
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

    /**
     * Writes a delay as {@code Retry-After} ({@link #seconds}) and {@code retry-after-ms} ({@link
     * #millis}), for a refusal whose delay the front decides itself.
     *
     * <pre>{@code
     * RetryAfter.write(Duration.ofSeconds(1), response::setHeader); // Retry-After: 1, retry-after-ms: 1000
     * }</pre>
     *
     * @param delay the delay; a negative one counts as zero, which is written as the least delay
     * @param headers receives each header's name and value
     * @throws NullPointerException if an argument is {@code null}
     */
    public static void write(Duration delay, BiConsumer<String, String> headers) {
        Objects.requireNonNull(delay, "delay must not be null");
        Objects.requireNonNull(headers, "headers must not be null");
        Duration wait = delay.isNegative() ? Duration.ZERO : delay;
        headers.accept(RateLimitResponses.RETRY_AFTER, Long.toString(seconds(wait)));
        headers.accept(RateLimitResponses.RETRY_AFTER_MS, Long.toString(millis(wait)));
    }

    /**
     * Returns a delay as protobuf's JSON writes a {@code google.protobuf.Duration}, the {@code
     * retryDelay} of Google's {@code google.rpc.RetryInfo}: {@link #millis} as seconds with three
     * decimals and an {@code s}, such as {@code 57.200s}.
     *
     * @param delay the delay; a negative one counts as zero, which is written as the least delay
     * @return the duration's JSON string, without quotes
     * @throws NullPointerException if {@code delay} is {@code null}
     */
    public static String protobufDuration(Duration delay) {
        Objects.requireNonNull(delay, "delay must not be null");
        long millis = millis(delay.isNegative() ? Duration.ZERO : delay);
        return millis / 1000 + "." + String.format(java.util.Locale.ROOT, "%03d", millis % 1000) + "s";
    }

    /** Rounds up to whole seconds; zero stays zero. */
    static long ceilSeconds(Duration duration) {
        return duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
    }
}
