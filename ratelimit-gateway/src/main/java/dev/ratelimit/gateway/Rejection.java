package dev.ratelimit.gateway;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Why a request was refused with 429.
 *
 * @param window the window that tripped ({@code concurrent} for the concurrency cap)
 * @param unit {@code requests}, {@code tokens} or {@code concurrency}
 * @param budget {@code null} when the tenant's own window tripped, else the upstream cap's name
 * @param limit that window's limit
 * @param retryAfter when a retry can first succeed; zero when it never can
 * @param tooLarge the request alone asks for more tokens than the window's limit: no retry helps
 */
record Rejection(
        String window, String unit, @Nullable String budget, long limit, Duration retryAfter, boolean tooLarge) {

    static final String CONCURRENCY = "concurrency";

    /** Retry-After in whole seconds, rounded up, at least 1. */
    long retryAfterSeconds() {
        return Math.max(1, RateLimitHeaders.ceilSeconds(retryAfter));
    }

    /** The message of a request that can never fit, with its estimate. */
    String tooLargeMessage(long estimatedTokens) {
        String subject = budget == null ? "your" : "the upstream's shared (" + budget + ")";
        return "This request needs an estimated " + estimatedTokens + " tokens (prompt plus the completion tokens it"
                + " allows), more than " + subject + " limit of " + limit + " tokens per window '" + window
                + "'; lower max_completion_tokens (or max_tokens) or shorten the prompt.";
    }

    String message() {
        String subject = budget == null ? "your" : "the upstream's shared (" + budget + ")";
        String what = unit.equals(CONCURRENCY)
                ? "Too many concurrent requests: " + subject + " limit of " + limit + " requests in flight is reached"
                : "Rate limit reached: " + subject + " limit of " + limit + " " + unit + " per window '" + window
                        + "' is used up";
        long seconds = retryAfterSeconds();
        return what + "; retry in " + seconds + (seconds == 1 ? " second." : " seconds.");
    }
}
