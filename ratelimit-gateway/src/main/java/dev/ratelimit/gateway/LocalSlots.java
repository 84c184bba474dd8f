package dev.ratelimit.gateway;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Slots in this process's memory, beside the in-memory store: exact, and gone with the process, so
 * they need no lease.
 */
final class LocalSlots implements Slots {

    private final ConcurrentMap<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

    @Override
    public @Nullable Slot tryAcquire(String tenant, int cap) {
        AtomicInteger count = inFlight.computeIfAbsent(tenant, t -> new AtomicInteger());
        while (true) {
            int now = count.get();
            if (now >= cap) {
                return null;
            }
            if (count.compareAndSet(now, now + 1)) {
                AtomicBoolean released = new AtomicBoolean();
                return () -> {
                    if (released.compareAndSet(false, true)) {
                        count.decrementAndGet();
                    }
                };
            }
        }
    }

    @Override
    public int inFlight(String tenant) {
        AtomicInteger count = inFlight.get(tenant);
        return count == null ? 0 : count.get();
    }

    @Override
    public @Nullable String problem() {
        return null; // memory is always there
    }

    @Override
    public String description() {
        return "in-memory";
    }

    @Override
    public void close() {}
}
