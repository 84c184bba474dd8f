package dev.ratelimit.http;

import java.util.function.BiConsumer;

/** {@link HeaderFamily#X_RATELIMIT}: limit, remaining and name of the deciding window. */
final class XRateLimitHeaders implements FamilyHeaders {

    @Override
    public void deciding(long limit, long remaining, String window, BiConsumer<String, String> headers) {
        headers.accept(RateLimitResponses.LIMIT, Long.toString(limit));
        headers.accept(RateLimitResponses.REMAINING, Long.toString(remaining));
        headers.accept(RateLimitResponses.WINDOW, HeaderValues.token(window));
    }

    @Override
    public boolean namesUncheckedAndShadowWindows() {
        return true;
    }
}
