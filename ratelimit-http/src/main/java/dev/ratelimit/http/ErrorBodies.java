package dev.ratelimit.http;

import dev.ratelimit.api.Window;
import org.jspecify.annotations.Nullable;

/**
 * The JSON bodies of refusals in each {@link ErrorShape}: plain, OpenAI's {@code
 * {"error":{"message","type","param","code"}}} plus {@code window} naming what tripped, or
 * Anthropic's {@code {"type":"error","error":{"type","message"}}}.
 */
final class ErrorBodies {

    private ErrorBodies() {}

    /**
     * A 429's: type {@code requests} or {@code tokens} (the window's unit) with OpenAI's {@code
     * rate_limit_exceeded}, or for a spend window (micro-dollars) OpenAI's {@code insufficient_quota},
     * its answer to an exhausted budget; and the window that tripped.
     */
    static String rateLimited(ErrorShape shape, Window window, long retryAfterSeconds, String message) {
        boolean money = window.unit().equals(Window.Unit.USD_MICROS);
        return switch (shape) {
            case OPENAI ->
                money
                        ? openAi(message, "insufficient_quota", "insufficient_quota", window.name())
                        : openAi(message, unit(window), "rate_limit_exceeded", window.name());
            case ANTHROPIC -> anthropic("rate_limit_error", message);
            case PLAIN -> plain("rate_limited", window.name(), window.limit(), retryAfterSeconds, message);
        };
    }

    /** A 429 of a concurrency cap: the requests in flight. */
    static String concurrencyLimited(ErrorShape shape, long limit, long retryAfterSeconds, String message) {
        return switch (shape) {
            case OPENAI -> openAi(message, "requests", "concurrency_limit_exceeded", RateLimitResponses.CONCURRENT);
            case ANTHROPIC -> anthropic("rate_limit_error", message);
            case PLAIN ->
                plain("concurrency_limited", RateLimitResponses.CONCURRENT, limit, retryAfterSeconds, message);
        };
    }

    /** A 400's: the request alone asks for more than the window can ever hold. */
    static String tooLarge(ErrorShape shape, Window window, String message) {
        return switch (shape) {
            case OPENAI -> openAi(message, "invalid_request_error", "request_too_large", window.name());
            case ANTHROPIC -> anthropic("invalid_request_error", message);
            case PLAIN ->
                "{\"error\":\"request_too_large\",\"window\":" + Json.quote(window.name()) + ",\"limit\":"
                        + window.limit() + ",\"message\":" + Json.quote(message) + "}";
        };
    }

    /** A 503's, while a fail-closed limiter cannot reach its store. */
    static String unavailable(ErrorShape shape, long retryAfterSeconds, String message) {
        return switch (shape) {
            case OPENAI -> openAi(message, "server_error", "rate_limiter_unavailable", null);
            case ANTHROPIC -> anthropic("api_error", message);
            case PLAIN ->
                "{\"error\":\"rate_limiter_unavailable\",\"retry_after_seconds\":" + retryAfterSeconds + ",\"message\":"
                        + Json.quote(message) + "}";
        };
    }

    static String unit(Window window) {
        return window.unit().name();
    }

    private static String plain(String error, String window, long limit, long retryAfterSeconds, String message) {
        return "{\"error\":" + Json.quote(error) + ",\"window\":" + Json.quote(window) + ",\"limit\":" + limit
                + ",\"retry_after_seconds\":" + retryAfterSeconds + ",\"message\":" + Json.quote(message) + "}";
    }

    private static String openAi(String message, String type, String code, @Nullable String window) {
        return "{\"error\":{\"message\":" + Json.quote(message) + ",\"type\":" + Json.quote(type)
                + ",\"param\":null,\"code\":" + Json.quote(code)
                + (window == null ? "" : ",\"window\":" + Json.quote(window)) + "}}";
    }

    private static String anthropic(String type, String message) {
        return "{\"type\":\"error\",\"error\":{\"type\":" + Json.quote(type) + ",\"message\":" + Json.quote(message)
                + "}}";
    }
}
