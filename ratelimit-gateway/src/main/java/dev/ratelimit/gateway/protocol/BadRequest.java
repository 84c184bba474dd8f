package dev.ratelimit.gateway.protocol;

import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.metrics.GatewayMetrics;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/** A request the gateway refuses before any budget is touched: its status and OpenAI error fields. */
public final class BadRequest extends Exception {

    private static final long serialVersionUID = 1L;

    public final int status;
    public final String code;
    public final @Nullable String param;

    public BadRequest(int status, String code, @Nullable String param, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.param = param;
    }

    /**
     * Answers the request in the shape of its API ({@code invalid_request_error}) and counts the
     * refusal in {@code gateway_refusals_total} under {@code endpoint}.
     */
    public void answer(Protocol protocol, String endpoint, GatewayMetrics metrics, HttpServletResponse response)
            throws IOException {
        metrics.refused(endpoint, status, code);
        ApiErrors.write(protocol, response, status, "invalid_request_error", code, param, String.valueOf(getMessage()));
    }

    public static BadRequest invalid(@Nullable String param, String message) {
        return new BadRequest(400, "invalid_value", param, message);
    }

    public static BadRequest missing(String param, String message) {
        return new BadRequest(400, "missing_required_parameter", param, message);
    }
}
