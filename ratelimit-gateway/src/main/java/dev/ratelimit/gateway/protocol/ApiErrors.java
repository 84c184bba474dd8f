package dev.ratelimit.gateway.protocol;

import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.upstream.Upstream;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's own error answers (a bad request, a missing key, an unreachable upstream, a
 * shutdown, the mock model's failures on demand) in the shape of the caller's API: OpenAI's {@code {"error":{"message","type","param","code"}}},
 * Anthropic's {@code {"type":"error","error":{"type","message"}}}, whose type follows from the
 * status, or Google's {@code {"error":{"code","message","status","details"}}} ({@link Gemini}).
 * Refusals of the limiter are the library's ({@code RateLimitResponses}).
 */
public final class ApiErrors {

    private ApiErrors() {}

    /**
     * Writes an error answer.
     *
     * @param type OpenAI's error type; Anthropic's and Google's follow from the status
     * @param code OpenAI's error code; Anthropic's and Google's shapes have none
     * @param param OpenAI's offending parameter, Google's field violation; Anthropic's shape has none
     */
    public static void write(
            Protocol protocol,
            HttpServletResponse response,
            int status,
            String type,
            @Nullable String code,
            @Nullable String param,
            String message)
            throws IOException {
        write(protocol, response, status, type, code, param, message, null);
    }

    /** Answers 404 in the protocol's shape for a request no upstream of the gateway speaks the API of. */
    public static void noUpstream(Protocol protocol, HttpServletResponse response, String message) throws IOException {
        write(protocol, response, 404, "invalid_request_error", "unknown_url", null, message);
    }

    /**
     * Writes an error answer of a refusal that knows when a retry may succeed: Google's shape
     * carries it as a {@code google.rpc.RetryInfo} (the caller sets {@code Retry-After} itself).
     */
    public static void write(
            Protocol protocol,
            HttpServletResponse response,
            int status,
            String type,
            @Nullable String code,
            @Nullable String param,
            String message,
            @Nullable Duration retry)
            throws IOException {
        switch (protocol) {
            case ANTHROPIC -> Anthropic.error(response, status, message);
            case GEMINI -> Gemini.error(response, status, message, param, retry);
            case OPENAI -> OpenAi.json(response, status, OpenAi.errorBody(type, code, param, message));
        }
    }

    /**
     * Answers a request whose upstream failed before its response began: 504 for a timeout, 502
     * otherwise, in the shape of the caller's API.
     */
    public static void upstreamFailed(Protocol protocol, HttpServletResponse response, Upstream.Failure failure)
            throws IOException {
        write(
                protocol,
                response,
                failure.timeout() ? 504 : 502,
                "upstream_error",
                failure.ending(),
                null,
                String.valueOf(failure.getMessage()));
    }
}
