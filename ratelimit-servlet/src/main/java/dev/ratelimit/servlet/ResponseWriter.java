package dev.ratelimit.servlet;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.servlet.internal.HeaderValues;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/** Writes the rate-limit headers and the 429 and 503 answers. */
final class ResponseWriter {

    static final String LIMIT = "X-RateLimit-Limit";
    static final String REMAINING = "X-RateLimit-Remaining";
    static final String WINDOW = "X-RateLimit-Window";
    static final String DEGRADED = "X-RateLimit-Degraded";
    static final String RATE_LIMIT = "RateLimit";
    static final String RATE_LIMIT_POLICY = "RateLimit-Policy";
    static final String RETRY_AFTER = "Retry-After";
    static final String OPENAI_LIMIT = "x-ratelimit-limit-requests";
    static final String OPENAI_REMAINING = "x-ratelimit-remaining-requests";
    static final String OPENAI_RESET = "x-ratelimit-reset-requests";
    static final String OPENAI_RETRY_AFTER_MS = "retry-after-ms";
    static final int TOO_MANY_REQUESTS = 429;

    private final boolean rateLimitHeaders;
    private final boolean draftHeaders;
    private final boolean openAiHeaders;
    private final boolean openAiErrors;
    private final long unavailableRetryAfterSeconds;
    private final ConcurrentMap<Tier, String> policies = new ConcurrentHashMap<>();

    ResponseWriter(
            boolean rateLimitHeaders,
            boolean draftHeaders,
            boolean openAiHeaders,
            boolean openAiErrors,
            long unavailableRetryAfterSeconds) {
        this.rateLimitHeaders = rateLimitHeaders;
        this.draftHeaders = draftHeaders;
        this.openAiHeaders = openAiHeaders;
        this.openAiErrors = openAiErrors;
        this.unavailableRetryAfterSeconds = unavailableRetryAfterSeconds;
    }

    void allowed(HttpServletResponse response, Tier tier, Decision decision) {
        if (draftHeaders) {
            response.setHeader(RATE_LIMIT_POLICY, policy(tier));
        }
        if (decision.degraded()) {
            // the store was not consulted: remaining counts are unknown, so none are claimed
            if (rateLimitHeaders) {
                response.setHeader(DEGRADED, "true");
            }
            return;
        }
        if (rateLimitHeaders) {
            response.setHeader(LIMIT, Long.toString(decision.limit()));
            response.setHeader(REMAINING, Long.toString(decision.remaining()));
            response.setHeader(WINDOW, HeaderValues.token(decision.window().name()));
        }
        if (draftHeaders) {
            response.setHeader(RATE_LIMIT, rateLimit(decision, decision.resetAfterSeconds()));
        }
        if (openAiHeaders) {
            openAi(response, decision, decision.resetAfter());
        }
    }

    /** The OpenAI-style family, for clients written against OpenAI's API. */
    private static void openAi(HttpServletResponse response, Decision decision, Duration reset) {
        response.setHeader(OPENAI_LIMIT, Long.toString(decision.limit()));
        response.setHeader(OPENAI_REMAINING, Long.toString(decision.remaining()));
        response.setHeader(OPENAI_RESET, HeaderValues.goDuration(reset));
    }

    void rejected(HttpServletResponse response, Tier tier, Decision decision) throws IOException {
        long retryAfter = decision.retryAfterSeconds();
        response.setStatus(TOO_MANY_REQUESTS);
        response.setHeader(RETRY_AFTER, Long.toString(retryAfter));
        if (rateLimitHeaders) {
            response.setHeader(LIMIT, Long.toString(decision.limit()));
            response.setHeader(REMAINING, "0");
            response.setHeader(WINDOW, HeaderValues.token(decision.window().name()));
        }
        if (draftHeaders) {
            response.setHeader(RATE_LIMIT_POLICY, policy(tier));
            // Retry-After must not point earlier than t: both come from the same duration
            response.setHeader(RATE_LIMIT, rateLimit(decision, Math.max(retryAfter, decision.resetAfterSeconds())));
        }
        if (openAiHeaders) {
            openAi(response, decision, decision.retryAfter());
            response.setHeader(
                    OPENAI_RETRY_AFTER_MS, Long.toString(HeaderValues.retryAfterMillis(decision.retryAfter())));
        }
        Window window = decision.window();
        String message = "Too many requests: the limit of " + window.limit()
                + (window.isTokens() ? " tokens" : " requests")
                + " per " + describe(window.lengthSeconds()) + " (window '" + window.name() + "') is used up; retry in "
                + retryAfter + (retryAfter == 1 ? " second." : " seconds.");
        writeJson(
                response,
                openAiErrors
                        ? OpenAiErrorBody.rateLimited(window, message)
                        : "{\"error\":\"rate_limited\",\"window\":" + Json.quote(window.name()) + ",\"limit\":"
                                + window.limit() + ",\"retry_after_seconds\":" + retryAfter + ",\"message\":"
                                + Json.quote(message) + "}");
    }

    void unavailable(HttpServletResponse response, Tier tier) throws IOException {
        response.setStatus(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
        response.setHeader(RETRY_AFTER, Long.toString(unavailableRetryAfterSeconds));
        if (draftHeaders) {
            response.setHeader(RATE_LIMIT_POLICY, policy(tier));
        }
        String message = "The rate limiter cannot reach its store and refuses requests until it can; retry in "
                + unavailableRetryAfterSeconds + " seconds.";
        writeJson(
                response,
                openAiErrors
                        ? OpenAiErrorBody.unavailable(message)
                        : "{\"error\":\"rate_limiter_unavailable\",\"retry_after_seconds\":"
                                + unavailableRetryAfterSeconds + ",\"message\":" + Json.quote(message) + "}");
    }

    private static void writeJson(HttpServletResponse response, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        response.setContentType("application/json");
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(body.length);
        try (OutputStream out = response.getOutputStream()) {
            out.write(body);
        }
    }

    private String policy(Tier tier) {
        String policy = policies.get(tier);
        if (policy == null) {
            policy = HeaderValues.policy(tier.windows());
            if (policies.size() < 1_024) {
                policies.putIfAbsent(tier, policy);
            }
        }
        return policy;
    }

    private static String rateLimit(Decision decision, long resetSeconds) {
        return HeaderValues.rateLimitItem(decision.window().name(), decision.remaining(), resetSeconds);
    }

    /** Names a window length for a sentence: "minute", "day", or "90 seconds". */
    private static String describe(long seconds) {
        String name = Window.of(1, Duration.ofSeconds(seconds)).name(); // second, minute, hour, day, week or "90s"
        return Character.isDigit(name.charAt(0)) ? seconds + " seconds" : name;
    }
}
