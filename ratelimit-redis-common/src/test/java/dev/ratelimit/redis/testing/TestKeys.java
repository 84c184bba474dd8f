package dev.ratelimit.redis.testing;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import java.time.Duration;
import java.util.List;

/** The key of a user's exact request window, as the stores write it. */
final class TestKeys {

    private TestKeys() {}

    static String requests(KeyLayout layout, String user, long seconds) {
        Window window = Window.of(1, Duration.ofSeconds(seconds));
        return KeySpace.of(layout).key(StoreRequest.Scope.user(user, List.of(window)), window);
    }
}
