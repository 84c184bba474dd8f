package dev.ratelimit.gateway.protocol.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Anthropic's Messages API as the gateway speaks it: the paths, the error shape {@code
 * {"type":"error","error":{"type","message"}}} and the error types by status.
 */
public final class Anthropic {

    /** The Messages API's paths on the gateway. */
    public static final String MESSAGES = "/v1/messages";

    public static final String COUNT_TOKENS = "/v1/messages/count_tokens";

    /** The {@code anthropic-version} sent upstream when the client sent none: the API requires one. */
    public static final String DEFAULT_VERSION = "2023-06-01";

    private Anthropic() {}

    /**
     * Whether a request's errors are answered in Anthropic's shape: it is under the Messages API's
     * path ({@code /v1/messages} and below), or it carries {@code anthropic-version}, which every
     * Anthropic client sends and OpenAI's never do.
     */
    public static boolean isAnthropicCaller(HttpServletRequest request) {
        String path = request.getRequestURI();
        return (path != null && (path.equals(MESSAGES) || path.startsWith(MESSAGES + "/")))
                || request.getHeader("anthropic-version") != null;
    }

    /** The error type Anthropic's API gives a status. */
    public static String type(int status) {
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

    public static ObjectNode errorBody(String type, String message) {
        ObjectNode body = OpenAi.JSON.createObjectNode().put("type", "error");
        body.putObject("error").put("type", type).put("message", message);
        return body;
    }

    /** Writes {@code {"type":"error","error":{"type","message"}}} with the status and its type. */
    public static void error(HttpServletResponse response, int status, String message) throws IOException {
        OpenAi.json(response, status, errorBody(type(status), message));
    }
}
