package dev.ratelimit.gateway;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The latest window states seen per tenant and per upstream cap, for the status page. The limiter
 * reports a window's count only when a request is decided, so each entry says when it was taken;
 * with several gateway processes on one Redis, each board shows what its own process last saw.
 */
final class StatusBoard {

    /** The windows of one tenant or cap as of one decision. */
    record Snapshot(List<WindowState> windows, Instant at) {}

    private final Clock clock;
    private final Map<String, Snapshot> tenants = new ConcurrentHashMap<>();

    StatusBoard(Clock clock) {
        this.clock = clock;
    }

    void record(String tenant, List<WindowState> windows) {
        tenants.put(tenant, new Snapshot(List.copyOf(windows), clock.instant()));
    }

    List<WindowState> windows(String tenant) {
        Snapshot snapshot = tenants.get(tenant);
        return snapshot == null ? List.of() : snapshot.windows();
    }

    /** The tenant's windows as last seen and when, or nothing yet. */
    @Nullable
    Snapshot snapshot(String tenant) {
        return tenants.get(tenant);
    }

    Clock clock() {
        return clock;
    }
}
