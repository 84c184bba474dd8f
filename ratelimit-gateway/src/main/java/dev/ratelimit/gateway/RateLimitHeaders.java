package dev.ratelimit.gateway;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.servlet.internal.HeaderValues;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The rate-limit headers of every metered response, set before its first byte: OpenAI's {@code
 * x-ratelimit-{limit,remaining,reset}-{requests,tokens}} (each family from the tenant's window with
 * the least remaining, left out when a rejection left that unknown), the IETF draft's {@code
 * RateLimit-Policy} (every window of the tier) and {@code RateLimit} (the tightest window per unit),
 * and on a 429 {@code Retry-After}, {@code retry-after-ms} and {@code x-ratelimit-window}. The values
 * are formatted by the servlet filter's own {@link HeaderValues}, so the metered endpoints and the
 * pass-through paths (answered by {@code RateLimitFilter}) write them alike.
 */
final class RateLimitHeaders {

    private final Map<Tier, String> policies = new ConcurrentHashMap<>();

    void write(HttpServletResponse response, Tier tier, Admission.Ticket ticket) {
        response.setHeader("RateLimit-Policy", policies.computeIfAbsent(tier, t -> HeaderValues.policy(t.windows())));
        if (ticket.degraded()) {
            response.setHeader("X-RateLimit-Degraded", "true"); // the store was not consulted: no counts to claim
        }
        List<String> items = new ArrayList<>();
        for (boolean tokens : new boolean[] {false, true}) {
            Decision.Usage tightest = tightest(tier, ticket.windows(), tokens);
            if (tightest != null) {
                String unit = tokens ? "tokens" : "requests";
                response.setHeader(
                        "x-ratelimit-limit-" + unit,
                        Long.toString(tightest.window().limit()));
                response.setHeader("x-ratelimit-remaining-" + unit, Long.toString(tightest.remaining()));
                response.setHeader("x-ratelimit-reset-" + unit, HeaderValues.goDuration(tightest.resetAfter()));
                items.add(HeaderValues.rateLimitItem(
                        tightest.window().name(), tightest.remaining(), ceilSeconds(tightest.resetAfter())));
            }
        }
        Rejection rejection = ticket.rejection();
        if (rejection != null && !rejection.tooLarge()) {
            response.setHeader("Retry-After", Long.toString(rejection.retryAfterSeconds()));
            response.setHeader("retry-after-ms", Long.toString(HeaderValues.retryAfterMillis(rejection.retryAfter())));
            response.setHeader("x-ratelimit-window", HeaderValues.token(rejection.window()));
        }
        if (!items.isEmpty()) {
            response.setHeader("RateLimit", String.join(", ", items));
        }
    }

    /**
     * The tenant's own window of one unit with the least remaining; ties go to the shortest reset.
     * {@code null} when unknown: a rejection leaves the longer windows out of the usage (not
     * evaluated), and one of them could be tighter than every window reported, unless one of those
     * already has nothing remaining.
     */
    private static Decision.@Nullable Usage tightest(Tier tier, List<Decision.Usage> windows, boolean tokens) {
        List<Decision.Usage> reported = windows.stream()
                .filter(w -> w.window().isTokens() == tokens && w.budget() == null)
                .toList();
        Decision.Usage tightest = reported.stream()
                .min(Comparator.comparingLong(Decision.Usage::remaining).thenComparing(Decision.Usage::resetAfter))
                .orElse(null);
        long inTier =
                tier.windows().stream().filter(w -> w.isTokens() == tokens).count();
        return tightest != null && reported.size() < inTier && tightest.remaining() > 0 ? null : tightest;
    }

    static long ceilSeconds(Duration duration) {
        return duration.getSeconds() + (duration.getNano() > 0 ? 1 : 0);
    }
}
