package dev.ratelimit.gateway.protocol.openai;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.ApiErrors;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import org.jspecify.annotations.Nullable;

/** JSON as the OpenAI API speaks it: one shared mapper and the error shape ({@link ApiErrors} writes it). */
public final class OpenAi {

    /** The deepest nesting a request body may have. */
    static final int MAX_NESTING_DEPTH = 64;

    /** Strict: one JSON value per body, duplicate keys refused, nesting bounded. */
    public static final JsonMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .disable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .build();

    static {
        JSON.getFactory()
                .setStreamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_NESTING_DEPTH)
                        .build());
    }

    private OpenAi() {}

    /** Writes OpenAI's 404 for a path nobody serves. */
    public static void unknownUrl(HttpServletResponse response, String message) throws IOException {
        ApiErrors.write(Protocol.OPENAI, response, 404, "invalid_request_error", "unknown_url", null, message);
    }

    public static ObjectNode errorBody(String type, @Nullable String code, @Nullable String param, String message) {
        ObjectNode body = JSON.createObjectNode();
        ObjectNode error = body.putObject("error");
        error.put("message", message);
        error.put("type", type);
        error.put("param", param);
        error.put("code", code);
        return body;
    }

    public static void json(HttpServletResponse response, int status, Object body) throws IOException {
        write(response, status, "application/json", JSON.writeValueAsBytes(body));
    }

    /** Writes a whole UTF-8 body with its length. */
    public static void write(HttpServletResponse response, int status, String contentType, byte[] body)
            throws IOException {
        response.setStatus(status);
        response.setContentType(contentType);
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(body.length);
        try (OutputStream out = response.getOutputStream()) {
            out.write(body);
        }
    }
}
