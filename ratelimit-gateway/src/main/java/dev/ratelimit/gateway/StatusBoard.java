package dev.ratelimit.gateway;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The latest window states seen per tenant and per upstream cap (by its shared budget's name), for
 * the status page. The limiter
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

    /** Records a decision's windows: the tenant's own under its name, each shared budget's under the budget's. */
    void record(String tenant, List<WindowState> windows) {
        Instant now = clock.instant();
        Map<String, List<WindowState>> byOwner = new LinkedHashMap<>();
        byOwner.put(tenant, new ArrayList<>());
        for (WindowState window : windows) {
            byOwner.computeIfAbsent(window.budget() == null ? tenant : window.budget(), owner -> new ArrayList<>())
                    .add(window);
        }
        byOwner.forEach((owner, owned) -> {
            if (!owned.isEmpty() || owner.equals(tenant)) {
                tenants.put(owner, new Snapshot(List.copyOf(owned), now));
            }
        });
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
