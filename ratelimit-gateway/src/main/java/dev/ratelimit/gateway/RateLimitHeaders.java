package dev.ratelimit.gateway;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The rate-limit headers of every metered response, set before its first byte: OpenAI's {@code
 * x-ratelimit-{limit,remaining,reset}-{requests,tokens}} (each family from the tenant's window with
 * the least remaining), the IETF draft's {@code RateLimit-Policy} (every window of the tier) and
 * {@code RateLimit} (the tightest window per unit), and on a 429 {@code Retry-After}, {@code
 * retry-after-ms} and {@code x-ratelimit-window}.
 */
final class RateLimitHeaders {

    private final Map<Tier, String> policies = new ConcurrentHashMap<>();

    void write(HttpServletResponse response, Tier tier, Admission.Ticket ticket) {
        response.setHeader("RateLimit-Policy", policies.computeIfAbsent(tier, RateLimitHeaders::policy));
        if (ticket.degraded()) {
            response.setHeader("X-RateLimit-Degraded", "true"); // the store was not consulted: no counts to claim
        }
        List<String> items = new ArrayList<>();
        for (boolean tokens : new boolean[] {false, true}) {
            Decision.Usage tightest = tightest(ticket.windows(), tokens);
            if (tightest != null) {
                String unit = tokens ? "tokens" : "requests";
                response.setHeader(
                        "x-ratelimit-limit-" + unit,
                        Long.toString(tightest.window().limit()));
                response.setHeader("x-ratelimit-remaining-" + unit, Long.toString(tightest.remaining()));
                response.setHeader("x-ratelimit-reset-" + unit, goDuration(tightest.resetAfter()));
                items.add(sfString(tightest.window().name()) + ";r=" + tightest.remaining() + ";t="
                        + ceilSeconds(tightest.resetAfter()));
            }
        }
        Rejection rejection = ticket.rejection();
        if (rejection != null && !rejection.tooLarge()) {
            response.setHeader("Retry-After", Long.toString(rejection.retryAfterSeconds()));
            response.setHeader("retry-after-ms", Long.toString(rejection.retryAfterMillis()));
            response.setHeader("x-ratelimit-window", token(rejection.window()));
        }
        if (!items.isEmpty()) {
            response.setHeader("RateLimit", String.join(", ", items));
        }
    }

    /** The tenant's own window of one unit with the least remaining; ties go to the shortest reset. */
    private static Decision.@Nullable Usage tightest(List<Decision.Usage> windows, boolean tokens) {
        return windows.stream()
                .filter(w -> w.window().isTokens() == tokens && w.budget() == null)
                .min(Comparator.comparingLong(Decision.Usage::remaining).thenComparing(Decision.Usage::resetAfter))
                .orElse(null);
    }

    private static String policy(Tier tier) {
        List<Window> windows = new ArrayList<>(tier.windows());
        windows.sort(Comparator.comparing(Window::length));
        List<String> items = new ArrayList<>();
        for (Window window : windows) {
            items.add(sfString(window.name()) + ";q=" + window.limit() + ";w=" + window.lengthSeconds());
        }
        return String.join(", ", items);
    }

    static long ceilSeconds(Duration duration) {
        return duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
    }

    /** OpenAI's reset notation (Go durations): {@code 250ms}, {@code 1s}, {@code 6m0s}, {@code 1h2m3.5s}. */
    static String goDuration(Duration duration) {
        long millis = Math.max(0, duration.toMillis());
        if (millis < 1_000) {
            return millis + "ms";
        }
        long hours = millis / 3_600_000;
        long minutes = (millis / 60_000) % 60;
        String seconds = new java.math.BigDecimal(millis % 60_000)
                .movePointLeft(3)
                .stripTrailingZeros()
                .toPlainString();
        return (hours > 0 ? hours + "h" : "") + (hours > 0 || minutes > 0 ? minutes + "m" : "") + seconds + "s";
    }

    /** A structured-field string (RFC 8941): printable ASCII, {@code "} and {@code \} escaped. */
    static String sfString(String value) {
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            if (c == '"' || c == '\\') {
                quoted.append('\\');
            }
            quoted.append(c < 0x20 || c > 0x7e ? '_' : c);
        }
        return quoted.append('"').toString();
    }

    private static String token(String value) {
        return value.replaceAll("[^\\x21-\\x7e]", "_").toLowerCase(Locale.ROOT);
    }
}
