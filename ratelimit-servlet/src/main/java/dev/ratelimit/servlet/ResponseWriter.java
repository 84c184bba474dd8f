package dev.ratelimit.servlet;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
    static final int TOO_MANY_REQUESTS = 429;

    private final boolean rateLimitHeaders;
    private final boolean draftHeaders;
    private final boolean openAiHeaders;
    private final long unavailableRetryAfterSeconds;
    private final ConcurrentMap<Tier, String> policies = new ConcurrentHashMap<>();

    ResponseWriter(
            boolean rateLimitHeaders, boolean draftHeaders, boolean openAiHeaders, long unavailableRetryAfterSeconds) {
        this.rateLimitHeaders = rateLimitHeaders;
        this.draftHeaders = draftHeaders;
        this.openAiHeaders = openAiHeaders;
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
            response.setHeader(WINDOW, token(decision.window().name()));
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
        response.setHeader(OPENAI_RESET, goDuration(reset));
    }

    /** Formats a duration as OpenAI's headers do (Go's notation): {@code 12ms}, {@code 1s}, {@code 6m0s}, {@code 1h0m0s}. */
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
        if (fraction > 0) {
            String digits =
                    String.format(java.util.Locale.ROOT, "%03d", fraction).replaceFirst("0+$", "");
            text.append('.').append(digits);
        }
        return text.append('s').toString();
    }

    void rejected(HttpServletResponse response, Tier tier, Decision decision) throws IOException {
        long retryAfter = decision.retryAfterSeconds();
        response.setStatus(TOO_MANY_REQUESTS);
        response.setHeader(RETRY_AFTER, Long.toString(retryAfter));
        if (rateLimitHeaders) {
            response.setHeader(LIMIT, Long.toString(decision.limit()));
            response.setHeader(REMAINING, "0");
            response.setHeader(WINDOW, token(decision.window().name()));
        }
        if (draftHeaders) {
            response.setHeader(RATE_LIMIT_POLICY, policy(tier));
            // Retry-After must not point earlier than t: both come from the same duration
            response.setHeader(RATE_LIMIT, rateLimit(decision, Math.max(retryAfter, decision.resetAfterSeconds())));
        }
        if (openAiHeaders) {
            openAi(response, decision, decision.retryAfter());
        }
        Window window = decision.window();
        String message = "Too many requests: the limit of " + window.limit() + " requests per "
                + describe(window.lengthSeconds()) + " (window '" + window.name() + "') is used up; retry in "
                + retryAfter + (retryAfter == 1 ? " second." : " seconds.");
        writeJson(
                response,
                "{\"error\":\"rate_limited\",\"window\":" + Json.quote(window.name()) + ",\"limit\":" + window.limit()
                        + ",\"retry_after_seconds\":" + retryAfter + ",\"message\":" + Json.quote(message) + "}");
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
                "{\"error\":\"rate_limiter_unavailable\",\"retry_after_seconds\":" + unavailableRetryAfterSeconds
                        + ",\"message\":" + Json.quote(message) + "}");
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
            List<Window> windows = new ArrayList<>(tier.windows());
            windows.sort(Comparator.comparing(Window::length));
            StringBuilder header = new StringBuilder();
            for (Window window : windows) {
                if (header.length() > 0) {
                    header.append(", ");
                }
                header.append(sfString(window.name()))
                        .append(";q=")
                        .append(window.limit())
                        .append(";w=")
                        .append(window.lengthSeconds());
            }
            policy = header.toString();
            if (policies.size() < 1_024) {
                policies.putIfAbsent(tier, policy);
            }
        }
        return policy;
    }

    private static String rateLimit(Decision decision, long resetSeconds) {
        return sfString(decision.window().name()) + ";r=" + decision.remaining() + ";t=" + resetSeconds;
    }

    /** Keeps a window name to printable ASCII for a plain header value. */
    static String token(String value) {
        StringBuilder clean = new StringBuilder(value.length());
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            clean.append(c < 0x20 || c > 0x7e ? '_' : c);
        }
        return clean.toString();
    }

    /** Quotes a structured-field string (RFC 8941): printable ASCII, with {@code "} and {@code \} escaped. */
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

    /** Names a window length for a sentence: "minute", "day", or "90 seconds". */
    private static String describe(long seconds) {
        String name = Window.of(1, Duration.ofSeconds(seconds)).name(); // second, minute, hour, day, week or "90s"
        return Character.isDigit(name.charAt(0)) ? seconds + " seconds" : name;
    }
}
