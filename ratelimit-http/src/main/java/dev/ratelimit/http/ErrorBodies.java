package dev.ratelimit.http;

import dev.ratelimit.api.Window;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The JSON bodies of refusals in each {@link ErrorShape}: plain, OpenAI's {@code
 * {"error":{"message","type","param","code"}}} plus {@code window} naming what tripped,
 * Anthropic's {@code {"type":"error","error":{"type","message"}}}, or Google's {@code
 * {"error":{"code","message","status","details"}}}.
 */
final class ErrorBodies {

    private ErrorBodies() {}

    /**
     * A 429's: type {@code requests} or {@code tokens} (the window's unit) with OpenAI's {@code
     * rate_limit_exceeded}, or for a spend window (micro-dollars) OpenAI's {@code insufficient_quota},
     * its answer to an exhausted budget; and the window that tripped.
     */
    static String rateLimited(
            ErrorShape shape,
            Window window,
            @Nullable String budget,
            Duration retryAfter,
            long retryAfterSeconds,
            String message) {
        boolean money = window.unit().equals(Window.Unit.USD_MICROS);
        return switch (shape) {
            case OPENAI ->
                money
                        ? openAi(message, "insufficient_quota", "insufficient_quota", window.name())
                        : openAi(message, unit(window), "rate_limit_exceeded", window.name());
            case ANTHROPIC -> anthropic("rate_limit_error", message);
            case GEMINI ->
                google(
                        429,
                        "RESOURCE_EXHAUSTED",
                        message,
                        quotaFailure("ratelimit/" + unit(window), window.name(), budget, window.limit()),
                        retryInfo(retryAfter));
            case PLAIN -> plain("rate_limited", window.name(), window.limit(), retryAfterSeconds, message);
        };
    }

    /** A 429 of a concurrency cap: the requests in flight. */
    static String concurrencyLimited(
            ErrorShape shape, long limit, Duration retryAfter, long retryAfterSeconds, String message) {
        return switch (shape) {
            case OPENAI -> openAi(message, "requests", "concurrency_limit_exceeded", RateLimitResponses.CONCURRENT);
            case ANTHROPIC -> anthropic("rate_limit_error", message);
            case GEMINI ->
                google(
                        429,
                        "RESOURCE_EXHAUSTED",
                        message,
                        quotaFailure("ratelimit/concurrent_requests", RateLimitResponses.CONCURRENT, null, limit),
                        retryInfo(retryAfter));
            case PLAIN ->
                plain("concurrency_limited", RateLimitResponses.CONCURRENT, limit, retryAfterSeconds, message);
        };
    }

    /** A 400's: the request alone asks for more than the window can ever hold. */
    static String tooLarge(ErrorShape shape, Window window, String message) {
        return switch (shape) {
            case OPENAI -> openAi(message, "invalid_request_error", "request_too_large", window.name());
            case ANTHROPIC -> anthropic("invalid_request_error", message);
            case GEMINI -> google(400, "INVALID_ARGUMENT", message);
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
            case GEMINI -> google(503, "UNAVAILABLE", message, retryInfo(Duration.ofSeconds(retryAfterSeconds)));
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

    /** Google's error body: {@code {"error":{"code","message","status","details":[...]}}}. */
    private static String google(int code, String status, String message, String... details) {
        StringBuilder body = new StringBuilder("{\"error\":{\"code\":")
                .append(code)
                .append(",\"message\":")
                .append(Json.quote(message))
                .append(",\"status\":")
                .append(Json.quote(status));
        if (details.length > 0) {
            body.append(",\"details\":[").append(String.join(",", details)).append(']');
        }
        return body.append("}}").toString();
    }

    /**
     * A {@code google.rpc.QuotaFailure} with one violation: the metric, the window as its id, the
     * limit as its value (an int64, which protobuf's JSON writes as a string), and as dimensions the
     * window and the level it belongs to (the shared budget, or {@code caller}).
     */
    private static String quotaFailure(String metric, String window, @Nullable String budget, long limit) {
        return "{\"@type\":\"type.googleapis.com/google.rpc.QuotaFailure\",\"violations\":[{\"quotaMetric\":"
                + Json.quote(metric) + ",\"quotaId\":" + Json.quote(window) + ",\"quotaDimensions\":{\"window\":"
                + Json.quote(window) + ",\"level\":" + Json.quote(budget == null ? "caller" : budget)
                + "},\"quotaValue\":\"" + limit + "\"}]}";
    }

    /** A {@code google.rpc.RetryInfo} whose {@code retryDelay} is {@link RetryAfter#protobufDuration}. */
    private static String retryInfo(Duration delay) {
        return "{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":"
                + Json.quote(RetryAfter.protobufDuration(delay)) + "}";
    }
}
