package dev.ratelimit.demo;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Writes the demo's responses. */
final class Responses {

    private Responses() {}

    static void json(HttpServletResponse response, int status, Object body) throws IOException {
        write(response, status, "application/json", Json.write(body));
    }

    static void text(HttpServletResponse response, int status, String contentType, String body) throws IOException {
        write(response, status, contentType, body);
    }

    /** An OpenAI-shaped error: {@code {"error":{"message":..,"type":..,"param":..,"code":..}}}. */
    static void error(HttpServletResponse response, int status, String type, @Nullable String code, String message)
            throws IOException {
        Map<String, @Nullable Object> error = new LinkedHashMap<>();
        error.put("message", message);
        error.put("type", type);
        error.put("param", null);
        error.put("code", code);
        json(response, status, Map.of("error", error));
    }

    private static void write(HttpServletResponse response, int status, String contentType, String body)
            throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setStatus(status);
        response.setContentType(contentType);
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(bytes.length);
        try (OutputStream out = response.getOutputStream()) {
            out.write(bytes);
        }
    }
}
