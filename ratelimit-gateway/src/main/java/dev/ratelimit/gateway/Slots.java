package dev.ratelimit.gateway;

import org.jspecify.annotations.Nullable;

/**
 * The concurrency cap: in-flight slots per tenant. A request holds a slot from admission until its
 * response ends, however it ends; long streams hold theirs throughout. Implementations are
 * thread-safe.
 */
interface Slots extends AutoCloseable {

    /**
     * Takes a slot when the tenant has fewer than {@code cap} in flight.
     *
     * @return the slot, or {@code null} when the tenant is at its cap
     */
    @Nullable
    Slot tryAcquire(String tenant, int cap);

    /** Returns the tenant's slots in flight now, or -1 when the store cannot tell. */
    int inFlight(String tenant);

    /**
     * Checks the slots' store now and says why slots cannot be taken, or {@code null} when they
     * can; for {@code /health} and the status page.
     */
    @Nullable
    String problem();

    /** Says where the slots live, for the banner and the status page. */
    String description();

    @Override
    void close();

    /** Returns slots without a cap, for the kill switch: every request passes. */
    static Slots unlimited() {
        return new Slots() {
            @Override
            public Slot tryAcquire(String tenant, int cap) {
                return () -> {};
            }

            @Override
            public int inFlight(String tenant) {
                return -1;
            }

            @Override
            public @Nullable String problem() {
                return null;
            }

            @Override
            public String description() {
                return "none (kill switch)";
            }

            @Override
            public void close() {}
        };
    }

    /** One held slot. */
    interface Slot {

        /** Gives the slot back; later calls do nothing. */
        void release();
    }
}
