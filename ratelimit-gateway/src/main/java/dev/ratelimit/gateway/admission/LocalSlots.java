package dev.ratelimit.gateway.admission;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Slots as leases of the in-memory store: exact, and gone with the process. Their lease (an hour,
 * renewed while held) only matters for a reservation this process never settles.
 */
public final class LocalSlots extends Slots.Leased {

    public LocalSlots() {
        super(Duration.ofHours(1));
    }

    @Override
    public @Nullable String problem() {
        return null; // memory is always there
    }

    @Override
    public String description() {
        return "in-memory";
    }
}
