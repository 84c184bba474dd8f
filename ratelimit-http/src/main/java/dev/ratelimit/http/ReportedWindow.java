package dev.ratelimit.http;

import dev.ratelimit.api.Window;
import java.time.Duration;

/**
 * A window as the headers report it: its remaining and when its budget grows again, exactly and in
 * whole seconds rounded up.
 */
record ReportedWindow(Window window, long remaining, Duration reset, long resetSeconds) {

    String name() {
        return window.name();
    }

    long limit() {
        return window.limit();
    }
}
