package dev.ratelimit.servlet.internal;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * {@link RateLimitResponses} onto a servlet response, for {@code RateLimitFilter} and other servlet
 * components that answer with the same contract. Not API: it may change in any release.
 */
public final class ServletResponses {

    private ServletResponses() {}

    /**
     * Adapts a servlet response.
     *
     * @param response the response
     * @return the target writing its status and headers
     */
    public static RateLimitResponses.Target target(HttpServletResponse response) {
        return new RateLimitResponses.Target() {
            @Override
            public void status(int status) {
                response.setStatus(status);
            }

            @Override
            public void header(String name, String value) {
                response.setHeader(name, value);
            }
        };
    }

    /**
     * Writes a JSON body and completes the response.
     *
     * @param response the response
     * @param json the body
     * @throws IOException if writing fails
     */
    public static void writeJson(HttpServletResponse response, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        response.setContentType(RateLimitResponses.JSON);
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(body.length);
        try (OutputStream out = response.getOutputStream()) {
            out.write(body);
        }
    }
}
