package dev.ratelimit.gateway;

import dev.ratelimit.gateway.UpstreamConfig.Protocol;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's own error answers (a bad request, a missing key, an unreachable upstream, a
 * shutdown, the mock model's failures on demand) in the shape of the caller's API: OpenAI's {@code {"error":{"message","type","param","code"}}}, or Anthropic's
 * {@code {"type":"error","error":{"type","message"}}}, whose type follows from the status. Refusals
 * of the limiter are the library's ({@code RateLimitResponses}).
 */
final class ApiErrors {

    private ApiErrors() {}

    /**
     * Writes an error answer.
     *
     * @param type OpenAI's error type; Anthropic's follows from the status
     * @param code OpenAI's error code; Anthropic's shape has none
     * @param param OpenAI's offending parameter; Anthropic's shape has none
     */
    static void write(
            Protocol protocol,
            HttpServletResponse response,
            int status,
            String type,
            @Nullable String code,
            @Nullable String param,
            String message)
            throws IOException {
        if (protocol == Protocol.ANTHROPIC) {
            Anthropic.error(response, status, message);
        } else {
            OpenAi.json(response, status, OpenAi.errorBody(type, code, param, message));
        }
    }
}
