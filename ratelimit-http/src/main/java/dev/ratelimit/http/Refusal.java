package dev.ratelimit.http;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The status and body of a refused request, whose headers {@link RateLimitResponses} has already
 * written; the front sends the body as {@value #CONTENT_TYPE}.
 *
 * @param status the status code: 429 rejected, 400 larger than a window can ever hold, 503 the
 *     limiter cannot reach its store
 * @param body the JSON body
 */
public record Refusal(int status, String body) {

    /** The media type of every body. */
    public static final String CONTENT_TYPE = "application/json";

    /**
     * Validates the components.
     *
     * @param status the status code: 429 rejected, 400 larger than a window can ever hold, 503 the
     *     limiter cannot reach its store
     * @param body the JSON body
     * @throws NullPointerException if {@code body} is {@code null}
     */
    public Refusal {
        Objects.requireNonNull(body, "body must not be null");
    }

    /**
     * Returns the body's UTF-8 bytes, to be sent with their length.
     *
     * @return the bytes
     */
    public byte[] bytes() {
        return body.getBytes(StandardCharsets.UTF_8);
    }
}
