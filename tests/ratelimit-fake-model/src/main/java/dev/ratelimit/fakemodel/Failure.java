package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An error answer in the shape of the call's provider: OpenAI's {@code
 * {"error":{"message","type","param","code"}}}, Anthropic's {@code
 * {"type":"error","error":{"type","message"}}}, Google's {@code
 * {"error":{"code","message","status","details"}}}; with a retry hint when asked ({@code
 * retry-after} in seconds for OpenAI and Anthropic, a {@code google.rpc.RetryInfo} for Gemini).
 * Immutable: each method returns a new failure.
 */
public final class Failure implements Behaviour {

    private final int status;
    private final String message;
    private final @Nullable String type;
    private final @Nullable String code;
    private final @Nullable Duration retryAfter;
    private final Map<String, String> headers;

    private Failure(
            int status,
            String message,
            @Nullable String type,
            @Nullable String code,
            @Nullable Duration retryAfter,
            Map<String, String> headers) {
        this.status = status;
        this.message = message;
        this.type = type;
        this.code = code;
        this.retryAfter = retryAfter;
        this.headers = Map.copyOf(headers);
    }

    /**
     * Returns a failure with this status, the message {@code "The fake model answers <status>."}
     * and the provider's type for the status.
     *
     * @param status the HTTP status, 400 to 599
     * @return the failure
     * @throws IllegalArgumentException if the status is not an error's
     */
    public static Failure status(int status) {
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("status must be an error's, 400 to 599: " + status);
        }
        return new Failure(status, "The fake model answers " + status + ".", null, null, null, Map.of());
    }

    /**
     * Returns this failure with another message.
     *
     * @param message the error's message
     * @return the new failure
     */
    public Failure message(String message) {
        return new Failure(status, message, type, code, retryAfter, headers);
    }

    /**
     * Returns this failure with another error type (OpenAI's {@code type}, Anthropic's {@code
     * error.type}; Gemini's status follows the HTTP status).
     *
     * @param type the type, such as {@code server_error} or {@code overloaded_error}
     * @return the new failure
     */
    public Failure type(String type) {
        return new Failure(status, message, type, code, retryAfter, headers);
    }

    /**
     * Returns this failure with OpenAI's {@code code}.
     *
     * @param code the code, such as {@code rate_limit_exceeded}
     * @return the new failure
     */
    public Failure code(String code) {
        return new Failure(status, message, type, code, retryAfter, headers);
    }

    /**
     * Returns this failure with a retry hint: {@code retry-after} in whole seconds, rounded up
     * (OpenAI, Anthropic), or a {@code google.rpc.RetryInfo} (Gemini).
     *
     * @param retryAfter when a retry may succeed
     * @return the new failure
     */
    public Failure retryAfter(Duration retryAfter) {
        return new Failure(status, message, type, code, retryAfter, headers);
    }

    /**
     * Returns this failure with one more response header.
     *
     * @param name the header's name
     * @param value its value
     * @return the new failure
     */
    public Failure header(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new Failure(status, message, type, code, retryAfter, more);
    }

    @Override
    public void answer(Call call, Exchange exchange) throws Exception {
        headers.forEach(exchange::header);
        if (retryAfter != null && call.provider() != Api.Provider.GEMINI) {
            long seconds = (retryAfter.toMillis() + 999) / 1000;
            exchange.header("retry-after", Long.toString(seconds));
        }
        exchange.json(status, body(call.provider()));
    }

    /** The error body in the provider's shape. */
    ObjectNode body(Api.Provider provider) {
        ObjectNode body = Json.object();
        switch (provider) {
            case OPENAI ->
                body.putObject("error")
                        .put("message", message)
                        .put("type", type != null ? type : status >= 500 ? "server_error" : "invalid_request_error")
                        .putNull("param")
                        .put("code", code);
            case ANTHROPIC -> {
                body.put("type", "error");
                body.putObject("error")
                        .put("type", type != null ? type : anthropicType(status))
                        .put("message", message);
            }
            case GEMINI -> {
                ObjectNode error = body.putObject("error")
                        .put("code", status)
                        .put("message", message)
                        .put("status", googleStatus(status));
                if (retryAfter != null) {
                    ArrayNode details = error.putArray("details");
                    details.addObject()
                            .put("@type", "type.googleapis.com/google.rpc.RetryInfo")
                            .put("retryDelay", protobufDuration(retryAfter));
                }
            }
        }
        return body;
    }

    /** Anthropic's error type of a status. */
    static String anthropicType(int status) {
        return switch (status) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 413 -> "request_too_large";
            case 429 -> "rate_limit_error";
            case 529 -> "overloaded_error";
            default -> status >= 500 ? "api_error" : "invalid_request_error";
        };
    }

    /** Google's canonical status name of an HTTP status. */
    static String googleStatus(int status) {
        return switch (status) {
            case 400, 413, 415 -> "INVALID_ARGUMENT";
            case 401 -> "UNAUTHENTICATED";
            case 403 -> "PERMISSION_DENIED";
            case 404 -> "NOT_FOUND";
            case 405, 501 -> "UNIMPLEMENTED";
            case 409 -> "ABORTED";
            case 429 -> "RESOURCE_EXHAUSTED";
            case 502, 503 -> "UNAVAILABLE";
            case 504 -> "DEADLINE_EXCEEDED";
            default -> status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
        };
    }

    /** A protobuf duration's JSON: seconds with the fraction it needs, such as {@code "5s"} or {@code "0.25s"}. */
    private static String protobufDuration(Duration duration) {
        return BigDecimal.valueOf(duration.toNanos(), 9).stripTrailingZeros().toPlainString() + "s";
    }
}
