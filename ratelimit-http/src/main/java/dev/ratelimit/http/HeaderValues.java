package dev.ratelimit.http;

import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * Formats the values of the rate-limit headers: OpenAI's durations, the IETF draft's structured
 * fields and plain header tokens.
 */
final class HeaderValues {

    private HeaderValues() {}

    /**
     * Formats a duration as OpenAI's {@code x-ratelimit-reset-*} headers do (Go's notation): {@code
     * 12ms}, {@code 1s}, {@code 1.5s}, {@code 6m0s}, {@code 1h0m0s}.
     *
     * @param duration the duration; a negative one counts as zero
     * @return the text, to the millisecond
     */
    static String goDuration(Duration duration) {
        long millis = Math.max(0, duration.toMillis());
        if (millis < 1_000) {
            return millis + "ms";
        }
        long hours = millis / 3_600_000;
        long minutes = millis / 60_000 % 60;
        long seconds = millis / 1_000 % 60;
        long fraction = millis % 1_000;
        StringBuilder text = new StringBuilder();
        if (hours > 0) {
            text.append(hours).append('h');
        }
        if (hours > 0 || minutes > 0) {
            text.append(minutes).append('m');
        }
        text.append(seconds);
        if (fraction > 0) { // three digits, without trailing zeros: .5, .05, .005, .743
            text.append('.').append(fraction / 100);
            if (fraction % 100 > 0) {
                text.append(fraction / 10 % 10);
                if (fraction % 10 > 0) {
                    text.append(fraction % 10);
                }
            }
        }
        return text.append('s').toString();
    }

    /**
     * Returns the IETF draft's {@code RateLimit-Policy} value of some windows, shortest first (in
     * their given order where lengths tie): {@code "minute";q=5;w=60, "day";q=100;w=86400}.
     *
     * @param windows the windows, such as a tier's
     * @return the header value
     */
    static String policy(Collection<Window> windows) {
        List<Window> sorted = new ArrayList<>(windows);
        sorted.sort(Comparator.comparing(Window::length));
        StringBuilder header = new StringBuilder();
        for (Window window : sorted) {
            if (header.length() > 0) {
                header.append(", ");
            }
            header.append(sfString(window.name()))
                    .append(";q=")
                    .append(window.limit())
                    .append(";w=")
                    .append(window.lengthSeconds());
        }
        return header.toString();
    }

    /**
     * Returns one item of the IETF draft's {@code RateLimit} header: {@code "minute";r=4;t=55}.
     *
     * @param window the window's name
     * @param remaining what is left of its limit
     * @param resetSeconds the seconds until its budget grows again
     * @return the item
     */
    static String rateLimitItem(String window, long remaining, long resetSeconds) {
        return sfString(window) + ";r=" + remaining + ";t=" + resetSeconds;
    }

    /**
     * Quotes a structured-field string (RFC 8941): printable ASCII, with {@code "} and {@code \}
     * escaped and any other character replaced by {@code _}.
     *
     * @param value the text
     * @return the quoted string
     */
    static String sfString(String value) {
        StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                quoted.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                quoted.append('_');
            } else {
                quoted.append(c);
            }
        }
        return quoted.append('"').toString();
    }

    /**
     * Keeps a window name to printable ASCII for a plain header value such as {@code
     * X-RateLimit-Window}.
     *
     * @param value the text
     * @return the text with any other character replaced by {@code _}
     */
    static String token(String value) {
        StringBuilder clean = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            clean.append(c < 0x20 || c > 0x7e ? '_' : c);
        }
        return clean.toString();
    }

    /**
     * The suffix of OpenAI's {@code x-ratelimit-*} headers for a unit: {@code requests}, {@code
     * tokens}, {@code spend} for micro-dollars, and any other unit's name with {@code _} as {@code -}.
     */
    static String unitSuffix(Window.Unit unit) {
        if (unit.equals(Window.Unit.USD_MICROS)) {
            return "spend";
        }
        return unit.name().replace('_', '-');
    }

    /** An amount as a header states it: micro-dollars in US dollars ({@code 4.25}), others as they are. */
    static String amount(Window.Unit unit, long amount) {
        if (unit.equals(Window.Unit.USD_MICROS)) {
            return java.math.BigDecimal.valueOf(amount, 6).stripTrailingZeros().toPlainString();
        }
        return Long.toString(amount);
    }
}
