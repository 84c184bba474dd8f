package dev.ratelimit.gateway.admission;

import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The concurrency cap: in-flight slots per tenant, held as leases in the limiter's own store and
 * taken in the same store call as the reservation ({@link RateLimiter#reserve(String,
 * dev.ratelimit.api.Tier, long, java.util.List, Concurrency)}), released by its settlement. A request
 * holds a slot from admission until its response ends, however it ends; long streams renew theirs
 * every third of the lease. Implementations are thread-safe.
 */
public interface Slots extends AutoCloseable {

    /**
     * The cap to reserve with, or {@code null} when requests take no slot (the kill switch).
     *
     * @param cap the tenant's most requests in flight
     */
    @Nullable
    Concurrency concurrency(int cap);

    /** Binds the slots to the limiter whose store holds them; {@link Admission} calls it once. */
    void bind(RateLimiter limiter);

    /** Starts renewing an admitted reservation's slot until {@link #settled}. */
    void held(Reservation reservation);

    /** Stops renewing a reservation's slot: its settlement released it. */
    void settled(Reservation reservation);

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
            public @Nullable Concurrency concurrency(int cap) {
                return null;
            }

            @Override
            public void bind(RateLimiter limiter) {}

            @Override
            public void held(Reservation reservation) {}

            @Override
            public void settled(Reservation reservation) {}

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

    /**
     * Slots as leases of the limiter's store: the reservations holding one are renewed every third
     * of the lease, so a stream of any length keeps its slot, and a process that dies stops renewing,
     * so its slots pass once their lease ends.
     */
    abstract class Leased implements Slots {

        private final Duration lease;
        private final Set<Reservation> held = ConcurrentHashMap.newKeySet();
        private final ScheduledExecutorService renewer;
        private volatile @Nullable RateLimiter limiter;

        Leased(Duration lease) {
            this.lease = lease;
            this.renewer = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "gateway-slot-renewer");
                thread.setDaemon(true);
                return thread;
            });
            long every = Math.max(1, lease.toMillis() / 3);
            renewer.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
        }

        @Override
        public Concurrency concurrency(int cap) {
            return new Concurrency(cap, lease);
        }

        @Override
        public void bind(RateLimiter limiter) {
            this.limiter = limiter;
        }

        @Override
        public void held(Reservation reservation) {
            held.add(reservation);
        }

        @Override
        public void settled(Reservation reservation) {
            held.remove(reservation);
        }

        /** The slots held by requests of this process now. */
        int held() {
            return held.size();
        }

        @Override
        public int inFlight(String tenant) {
            try {
                return (int) inFlightOrFail(tenant);
            } catch (RateLimiterUnavailableException e) {
                return -1;
            }
        }

        /**
         * The tenant's slots held now, -1 before {@link #bind}.
         *
         * @throws RateLimiterUnavailableException when the store cannot be reached
         */
        long inFlightOrFail(String tenant) {
            RateLimiter bound = limiter;
            return bound == null ? -1 : bound.inFlight(tenant);
        }

        /** The lease, for the description. */
        Duration lease() {
            return lease;
        }

        private void renewAll() {
            for (Reservation reservation : held) {
                try {
                    reservation.renew(); // a failure is the limiter's to count; the next round retries
                } catch (RuntimeException e) {
                    // the store is away: the lease runs on until it answers again
                }
            }
        }

        @Override
        public void close() {
            renewer.shutdownNow();
        }
    }
}
