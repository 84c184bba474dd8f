package dev.ratelimit.gateway.protocol.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.http.RetryAfter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Google's Gemini API as the gateway speaks it: the paths under {@code /v1beta}, the key ({@code
 * x-goog-api-key} or {@code ?key=}), and the error shape {@code {"error":{"code","message","status",
 * "details"}}}, whose {@code status} is the canonical code of the HTTP status ({@code
 * INVALID_ARGUMENT}, {@code NOT_FOUND}, {@code RESOURCE_EXHAUSTED}...), with a {@code
 * google.rpc.BadRequest} naming the field of a 400 and a {@code google.rpc.RetryInfo} on a refusal
 * that knows when to retry. The limiter's own refusals are the library's ({@code ErrorShape.GEMINI}).
 */
public final class Gemini {

    /** The prefix of the Gemini API's paths on the gateway. */
    public static final String PREFIX = "/v1beta";

    /** Google's stable version's prefix, under which the gateway answers a model's methods too. */
    static final String STABLE = "/v1";

    /** The methods of a model the gateway answers: {@code POST /v1beta/models/{model}:{method}}. */
    public static final String GENERATE = "generateContent";

    static final String STREAM = "streamGenerateContent";
    public static final String COUNT_TOKENS = "countTokens";

    /** A model's name in a path: what Google's model ids are made of. */
    private static final Pattern MODEL_METHOD = Pattern.compile("/models/([A-Za-z0-9._-]+):([A-Za-z]+)");

    private static final Pattern MODEL = Pattern.compile("/models/[A-Za-z0-9._-]+");

    private Gemini() {}

    /**
     * A call of one model's method, from the path below {@code /v1beta} ({@code
     * /models/gemini-2.0-flash:generateContent}).
     */
    public record ModelCall(String model, String method) {

        public static @Nullable ModelCall of(@Nullable String pathInfo) {
            if (pathInfo == null) {
                return null;
            }
            Matcher matcher = MODEL_METHOD.matcher(pathInfo);
            return matcher.matches() ? new ModelCall(matcher.group(1), matcher.group(2)) : null;
        }

        /** Whether the gateway meters or answers this method: generate, stream, or count. */
        public boolean served() {
            return method.equals(GENERATE) || method.equals(STREAM) || method.equals(COUNT_TOKENS);
        }
    }

    /** Whether a path below {@code /v1beta} is the model list or one model: relayed, request windows only. */
    public static boolean isModelListing(String method, @Nullable String pathInfo) {
        return method.equals("GET")
                && pathInfo != null
                && (pathInfo.equals("/models") || MODEL.matcher(pathInfo).matches());
    }

    /**
     * Whether a request is the Gemini API's, whose errors are Google's: under {@code /v1beta}, or a
     * model's method under {@code /v1} ({@code /v1/models/{model}:generateContent}, Google's stable
     * version, where the Gen AI SDKs send it unless told {@code apiVersion("v1beta")}).
     */
    public static boolean isGeminiCaller(HttpServletRequest request) {
        String path = request.getRequestURI();
        return path != null
                && (path.equals(PREFIX)
                        || path.startsWith(PREFIX + "/")
                        || (path.startsWith(STABLE + "/models/")
                                && ModelCall.of(path.substring(STABLE.length())) != null));
    }

    /**
     * The key a Gemini client sent: {@code x-goog-api-key}, else the query's {@code key} (read from
     * the query string itself: the body is never parsed as a form); {@code null} when neither.
     */
    public static @Nullable String apiKey(HttpServletRequest request) {
        String header = request.getHeader("x-goog-api-key");
        if (header != null && !header.isBlank()) {
            return header.trim();
        }
        String query = request.getQueryString();
        if (query == null || !isGeminiCaller(request)) {
            return null;
        }
        for (String pair : query.split("&")) {
            if (pair.startsWith("key=")) {
                try {
                    String key = URLDecoder.decode(pair.substring(4), StandardCharsets.UTF_8);
                    return key.isBlank() ? null : key.trim();
                } catch (IllegalArgumentException e) {
                    return null; // not a valid escape: no key
                }
            }
        }
        return null;
    }

    /**
     * The query to send upstream: the client's without its {@code key} (the gateway's own key for
     * the client, never relayed), {@code ""} or {@code ?...}.
     */
    public static String queryWithoutKey(@Nullable String query) {
        if (query == null || query.isEmpty()) {
            return "";
        }
        StringBuilder kept = new StringBuilder();
        for (String pair : query.split("&")) {
            if (!pair.isEmpty() && !pair.startsWith("key=") && !pair.equals("key")) {
                kept.append(kept.length() == 0 ? "?" : "&").append(pair);
            }
        }
        return kept.toString();
    }

    /** The canonical code Google's APIs give an HTTP status. */
    static String status(int code) {
        return switch (code) {
            case 400, 413, 415 -> "INVALID_ARGUMENT";
            case 401 -> "UNAUTHENTICATED";
            case 403 -> "PERMISSION_DENIED";
            case 404 -> "NOT_FOUND";
            case 405, 501 -> "UNIMPLEMENTED";
            case 409 -> "ABORTED";
            case 429 -> "RESOURCE_EXHAUSTED";
            case 499 -> "CANCELLED";
            case 502, 503 -> "UNAVAILABLE";
            case 504 -> "DEADLINE_EXCEEDED";
            default -> code >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
        };
    }

    /**
     * Google's error body: the status's code, the message, and the details: a {@code
     * google.rpc.BadRequest} naming {@code field} (on a 400) and a {@code google.rpc.RetryInfo} of
     * {@code retry}, each when given.
     */
    static ObjectNode errorBody(int code, String message, @Nullable String given, @Nullable Duration retry) {
        String field = code == 400 ? given : null;
        ObjectNode body = OpenAi.JSON.createObjectNode();
        ObjectNode error = body.putObject("error");
        error.put("code", code).put("message", message).put("status", status(code));
        if (field != null || retry != null) {
            ArrayNode details = error.putArray("details");
            if (field != null) {
                ObjectNode badRequest = details.addObject().put("@type", "type.googleapis.com/google.rpc.BadRequest");
                badRequest
                        .putArray("fieldViolations")
                        .addObject()
                        .put("field", field)
                        .put("description", message);
            }
            if (retry != null) {
                details.addObject()
                        .put("@type", "type.googleapis.com/google.rpc.RetryInfo")
                        .put("retryDelay", RetryAfter.protobufDuration(retry));
            }
        }
        return body;
    }

    /** Writes {@link #errorBody} with its status. */
    public static void error(
            HttpServletResponse response, int code, String message, @Nullable String field, @Nullable Duration retry)
            throws IOException {
        OpenAi.json(response, code, errorBody(code, message, field, retry));
    }

    /**
     * The {@code retryDelay} of a Google error body's {@code google.rpc.RetryInfo} (such as {@code
     * "57.2s"}); {@code null} when it has none or it cannot be read.
     */
    static @Nullable Duration retryDelay(byte[] body) {
        JsonNode details;
        try {
            details = OpenAi.JSON.readTree(body).path("error").path("details");
        } catch (IOException e) {
            return null;
        }
        for (JsonNode detail : details) {
            if (detail.path("@type").asText("").endsWith("google.rpc.RetryInfo")) {
                return parseDuration(detail.path("retryDelay").asText(""));
            }
        }
        return null;
    }

    /** A protobuf duration's JSON ({@code "57.2s"}, {@code "3s"}); {@code null} when not one, or not positive. */
    public static @Nullable Duration parseDuration(String text) {
        if (!text.endsWith("s")) {
            return null;
        }
        try {
            java.math.BigDecimal seconds = new java.math.BigDecimal(text.substring(0, text.length() - 1));
            if (seconds.signum() <= 0) {
                return null;
            }
            long nanos = seconds.movePointRight(9)
                    .setScale(0, java.math.RoundingMode.CEILING)
                    .longValueExact();
            return Duration.ofNanos(nanos);
        } catch (NumberFormatException | ArithmeticException e) {
            return null;
        }
    }
}
