package dev.ratelimit.spring.boot.web.internal;

import dev.ratelimit.genai.RateLimitExceededException;
import org.jspecify.annotations.Nullable;

/** Finds a refused model call in what a handler threw; loaded only with ratelimit-genai-common. Not API. */
public final class ModelRefusals {

    private ModelRefusals() {}

    /**
     * Returns the refusal that caused an exception, looking through wrapping exceptions.
     *
     * @param error what the handler threw
     * @return the refusal, or {@code null} when it is not one
     */
    public static @Nullable RateLimitExceededException find(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (e instanceof RateLimitExceededException refusal) {
                return refusal;
            }
        }
        return null;
    }
}
