package dev.ratelimit.gateway;

import org.jspecify.annotations.Nullable;

/** A request the gateway refuses before any budget is touched: its status and OpenAI error fields. */
final class BadRequest extends Exception {

    private static final long serialVersionUID = 1L;

    final int status;
    final String code;
    final @Nullable String param;

    BadRequest(int status, String code, @Nullable String param, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.param = param;
    }

    static BadRequest invalid(@Nullable String param, String message) {
        return new BadRequest(400, "invalid_value", param, message);
    }

    static BadRequest missing(String param, String message) {
        return new BadRequest(400, "missing_required_parameter", param, message);
    }
}
