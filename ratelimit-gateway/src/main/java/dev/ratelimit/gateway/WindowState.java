package dev.ratelimit.gateway;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * One window as a response reports it: the tenant's own, or an upstream cap's.
 *
 * @param name the window's name, such as {@code minute} or {@code tokens-minute}
 * @param tokens whether it counts tokens rather than requests
 * @param budget {@code null} for the tenant's own window, else the shared budget's name
 * @param limit the window's limit
 * @param used what the window holds after this request
 * @param resetAfter the time until the window's budget next grows
 */
record WindowState(String name, boolean tokens, @Nullable String budget, long limit, long used, Duration resetAfter) {

    long remaining() {
        return Math.max(0, limit - used);
    }

    String unit() {
        return tokens ? "tokens" : "requests";
    }
}
