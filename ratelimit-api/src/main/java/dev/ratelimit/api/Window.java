package dev.ratelimit.api;

import java.time.Duration;

/**
 * One limit: at most {@code limit} requests within any {@code length}-long span of time, ending now.
 *
 * @param name a short label used in headers, metrics and messages (for example {@code "minute"})
 * @param limit the number of requests allowed within the window, at least 1
 * @param length the window length: a whole number of seconds, at least one second
 */
public record Window(String name, int limit, Duration length) {

    /**
     * Validates the components.
     *
     * @throws NullPointerException if {@code name} or {@code length} is {@code null}
     * @throws IllegalArgumentException if {@code name} is blank, {@code limit} is below 1, or {@code
     *     length} is not a positive whole number of seconds
     */
    public Window {
        Checks.notBlank(name, "name");
        Checks.positive(limit, "limit");
        Checks.windowLength(length, "length");
    }

    /**
     * Creates a window named after its length: {@code "second"}, {@code "minute"}, {@code "hour"},
     * {@code "day"}, {@code "week"}, or otherwise the length in seconds such as {@code "90s"}.
     *
     * @param limit the number of requests allowed within the window, at least 1
     * @param length the window length, a whole number of seconds
     * @return the window
     */
    public static Window of(int limit, Duration length) {
        Checks.windowLength(length, "length");
        return new Window(nameFor(length), limit, length);
    }

    /**
     * Returns the window length in whole seconds.
     *
     * @return the length in seconds
     */
    public long lengthSeconds() {
        return length.getSeconds();
    }

    /**
     * Returns the window length in milliseconds.
     *
     * @return the length in milliseconds
     */
    public long lengthMillis() {
        return length.toMillis();
    }

    private static String nameFor(Duration length) {
        long seconds = length.getSeconds();
        if (seconds == 1) {
            return "second";
        } else if (seconds == 60) {
            return "minute";
        } else if (seconds == 3_600) {
            return "hour";
        } else if (seconds == 86_400) {
            return "day";
        } else if (seconds == 604_800) {
            return "week";
        }
        return seconds + "s";
    }
}
