package dev.ratelimit.servlet.internal;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Writes the rate-limit headers and the 429 and 503 answers of the HTTP contract onto any HTTP
 * response ({@link Target}), so that {@code RateLimitFilter} and other web stacks (Spring WebFlux)
 * answer alike. Not API: it may change in any release.
 *
 * <p>Every header reports the deciding window only ({@link Decision#window()}), which the store
 * always evaluated; the windows a rejection leaves out of {@link Decision#usage()} (not evaluated,
 * unknown) are never reported, nor stood in for.
 */
public final class RateLimitResponses {

    /** Where the answer goes: a response's status and headers. */
    public interface Target {

        /**
         * Sets the status code.
         *
         * @param status the status code
         */
        void status(int status);

        /**
         * Sets a header, replacing any value it had.
         *
         * @param name the header's name
         * @param value its value
         */
        void header(String name, String value);
    }

    /** The media type of the 429 and 503 bodies. */
    public static final String JSON = "application/json";

    public static final String LIMIT = "X-RateLimit-Limit";
    public static final String REMAINING = "X-RateLimit-Remaining";
    public static final String WINDOW = "X-RateLimit-Window";
    public static final String DEGRADED = "X-RateLimit-Degraded";
    public static final String RATE_LIMIT = "RateLimit";
    public static final String RATE_LIMIT_POLICY = "RateLimit-Policy";
    public static final String RETRY_AFTER = "Retry-After";
    public static final String OPENAI_LIMIT = "x-ratelimit-limit-requests";
    public static final String OPENAI_REMAINING = "x-ratelimit-remaining-requests";
    public static final String OPENAI_RESET = "x-ratelimit-reset-requests";
    public static final String OPENAI_RETRY_AFTER_MS = "retry-after-ms";
    static final int TOO_MANY_REQUESTS = 429;
    static final int SERVICE_UNAVAILABLE = 503;

    private final boolean rateLimitHeaders;
    private final boolean draftHeaders;
    private final boolean openAiHeaders;
    private final boolean openAiErrors;
    private final long unavailableRetryAfterSeconds;
    private final ConcurrentMap<Tier, String> policies = new ConcurrentHashMap<>();

    /**
     * Creates a writer.
     *
     * @param rateLimitHeaders whether to write the {@code X-RateLimit-*} family
     * @param draftHeaders whether to write the IETF draft's {@code RateLimit} and {@code RateLimit-Policy}
     * @param openAiHeaders whether to write OpenAI's {@code x-ratelimit-*-requests} family
     * @param openAiErrors whether 429 and 503 bodies take OpenAI's error shape
     * @param unavailableRetryAfterSeconds a 503's {@code Retry-After}
     */
    public RateLimitResponses(
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

    /**
     * Writes the headers of an allowed (or degraded) request.
     *
     * @param response the response
     * @param tier the caller's tier
     * @param decision the decision
     */
    public void allowed(Target response, Tier tier, Decision decision) {
        if (draftHeaders) {
            response.header(RATE_LIMIT_POLICY, policy(tier));
        }
        if (decision.degraded()) {
            // the store was not consulted: remaining counts are unknown, so none are claimed
            if (rateLimitHeaders) {
                response.header(DEGRADED, "true");
            }
            return;
        }
        if (rateLimitHeaders) {
            response.header(LIMIT, Long.toString(decision.limit()));
            response.header(REMAINING, Long.toString(decision.remaining()));
            response.header(WINDOW, HeaderValues.token(decision.window().name()));
        }
        if (draftHeaders) {
            response.header(RATE_LIMIT, rateLimit(decision, decision.resetAfterSeconds()));
        }
        if (openAiHeaders) {
            openAi(response, decision, decision.resetAfter());
        }
    }

    /** The OpenAI-style family, for clients written against OpenAI's API. */
    private static void openAi(Target response, Decision decision, Duration reset) {
        response.header(OPENAI_LIMIT, Long.toString(decision.limit()));
        response.header(OPENAI_REMAINING, Long.toString(decision.remaining()));
        response.header(OPENAI_RESET, HeaderValues.goDuration(reset));
    }

    /**
     * Writes a 429's status and headers and returns its JSON body.
     *
     * @param response the response
     * @param tier the caller's tier
     * @param decision the rejection
     * @return the body, to be sent as {@value #JSON}
     */
    public String rejected(Target response, Tier tier, Decision decision) {
        long retryAfter = decision.retryAfterSeconds();
        response.status(TOO_MANY_REQUESTS);
        response.header(RETRY_AFTER, Long.toString(retryAfter));
        if (rateLimitHeaders) {
            response.header(LIMIT, Long.toString(decision.limit()));
            response.header(REMAINING, "0");
            response.header(WINDOW, HeaderValues.token(decision.window().name()));
        }
        if (draftHeaders) {
            response.header(RATE_LIMIT_POLICY, policy(tier));
            // Retry-After must not point earlier than t: both come from the same duration
            response.header(RATE_LIMIT, rateLimit(decision, Math.max(retryAfter, decision.resetAfterSeconds())));
        }
        if (openAiHeaders) {
            openAi(response, decision, decision.retryAfter());
            response.header(OPENAI_RETRY_AFTER_MS, Long.toString(HeaderValues.retryAfterMillis(decision.retryAfter())));
        }
        Window window = decision.window();
        String message = "Too many requests: the limit of " + window.limit()
                + (window.isTokens() ? " tokens" : " requests")
                + " per " + describe(window.lengthSeconds()) + " (window '" + window.name() + "') is used up; retry in "
                + retryAfter + (retryAfter == 1 ? " second." : " seconds.");
        return openAiErrors
                ? OpenAiErrorBody.rateLimited(window, message)
                : "{\"error\":\"rate_limited\",\"window\":" + Json.quote(window.name()) + ",\"limit\":"
                        + window.limit() + ",\"retry_after_seconds\":" + retryAfter + ",\"message\":"
                        + Json.quote(message) + "}";
    }

    /**
     * Writes a 503's status and headers, while a fail-closed limiter cannot reach its store, and
     * returns its JSON body.
     *
     * @param response the response
     * @param tier the caller's tier
     * @return the body, to be sent as {@value #JSON}
     */
    public String unavailable(Target response, Tier tier) {
        response.status(SERVICE_UNAVAILABLE);
        response.header(RETRY_AFTER, Long.toString(unavailableRetryAfterSeconds));
        if (draftHeaders) {
            response.header(RATE_LIMIT_POLICY, policy(tier));
        }
        String message = "The rate limiter cannot reach its store and refuses requests until it can; retry in "
                + unavailableRetryAfterSeconds + " seconds.";
        return openAiErrors
                ? OpenAiErrorBody.unavailable(message)
                : "{\"error\":\"rate_limiter_unavailable\",\"retry_after_seconds\":" + unavailableRetryAfterSeconds
                        + ",\"message\":" + Json.quote(message) + "}";
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
