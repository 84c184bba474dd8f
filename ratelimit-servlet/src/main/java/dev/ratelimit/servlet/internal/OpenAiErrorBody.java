package dev.ratelimit.servlet.internal;

import dev.ratelimit.api.Window;
import org.jspecify.annotations.Nullable;

/**
 * OpenAI's error body, {@code {"error":{"message","type","param","code"}}}, for the filter's 429 and
 * 503 when it guards an API that OpenAI's clients call: their SDKs put {@code error.message} into
 * the exception they raise.
 */
final class OpenAiErrorBody {

    private OpenAiErrorBody() {}

    /** A 429's: type {@code requests} or {@code tokens}, and the window that tripped. */
    static String rateLimited(Window window, String message) {
        return body(message, window.isTokens() ? "tokens" : "requests", "rate_limit_exceeded", window.name());
    }

    /** A 503's, while a fail-closed limiter cannot reach its store. */
    static String unavailable(String message) {
        return body(message, "server_error", "rate_limiter_unavailable", null);
    }

    private static String body(String message, String type, String code, @Nullable String window) {
        return "{\"error\":{\"message\":" + Json.quote(message) + ",\"type\":" + Json.quote(type)
                + ",\"param\":null,\"code\":" + Json.quote(code)
                + (window == null ? "" : ",\"window\":" + Json.quote(window)) + "}}";
    }
}
