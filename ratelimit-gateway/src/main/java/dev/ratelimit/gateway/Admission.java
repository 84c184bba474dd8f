package dev.ratelimit.gateway;

import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.GatewayConfig.TierConfig;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's one doorway to the limiter: a request is admitted when one reservation of its
 * estimated tokens fits the tenant's windows and the model's upstream cap and the tenant has a free
 * concurrency slot, all in one atomic store call (all or nothing: a window's refusal takes no slot,
 * the cap's refusal charges no window), and the admission is settled exactly once when the response
 * ends, with the tokens used ({@link Ticket#commit}) or nothing ({@link Ticket#cancel}), which frees
 * the slot in the same store call.
 */
final class Admission {

    /** When a request the concurrency cap refused may retry: slots free as responses end. */
    static final Duration CONCURRENCY_RETRY = Duration.ofSeconds(1);

    private final RateLimiter limiter;
    private final Slots slots;
    private final GatewayMetrics metrics;
    private final Set<Ticket> open = ConcurrentHashMap.newKeySet(); // admitted, not settled yet

    Admission(RateLimiter limiter, Slots slots, GatewayMetrics metrics) {
        this.limiter = limiter;
        this.slots = slots;
        this.metrics = metrics;
        slots.bind(limiter);
    }

    /**
     * Admits one request of {@code tenant}: its reservation and its concurrency slot in one store
     * call; a refusal of either leaves nothing held.
     *
     * @throws RateLimiterUnavailableException when the limiter fails closed and its store is down
     */
    Ticket admit(String tenant, TierConfig tier, @Nullable ModelCap cap, long estimatedTokens) {
        List<SharedBudget> shared = cap == null ? List.of() : List.of(cap.budget());
        Concurrency concurrency = slots.concurrency(tier.maxConcurrent());
        Reservation reservation = concurrency == null
                ? limiter.reserve(tenant, tier.tier(), estimatedTokens, shared)
                : limiter.reserve(tenant, tier.tier(), estimatedTokens, shared, concurrency);
        Decision decision = reservation.decision();
        if (reservation.concurrencyLimited()) {
            return new Ticket(tenant, null, null, decision.usage(), null);
        }
        if (!decision.allowed()) {
            return new Ticket(tenant, null, decision, decision.usage(), null);
        }
        Ticket ticket = new Ticket(tenant, cap, decision, decision.usage(), reservation);
        open.add(ticket);
        slots.held(reservation);
        return ticket;
    }

    /** The admissions not settled yet: requests in flight, for the shutdown. */
    int open() {
        return open.size();
    }

    /**
     * Cancels every admission not settled yet and frees its slot, for a shutdown whose requests
     * outlived its deadline.
     *
     * @return how many were cancelled
     */
    int cancelOpen(String ending) {
        int cancelled = 0;
        for (Ticket ticket : List.copyOf(open)) {
            if (!ticket.isSettled()) {
                ticket.cancel(ending);
                cancelled++;
            }
        }
        return cancelled;
    }

    /** One admission: refused, or held until {@link #commit} or {@link #cancel}, whichever comes first. */
    final class Ticket {

        private final String tenant;
        private final @Nullable ModelCap cap;
        private final @Nullable Decision decision;
        private final List<Decision.Usage> windows;
        private final @Nullable Reservation reservation;
        private final AtomicBoolean settled = new AtomicBoolean();
        private volatile @Nullable String ending;
        private volatile long settledTokens = -1;

        private Ticket(
                String tenant,
                @Nullable ModelCap cap,
                @Nullable Decision decision,
                List<Decision.Usage> windows,
                @Nullable Reservation reservation) {
            this.tenant = tenant;
            this.cap = cap;
            this.decision = decision;
            this.windows = windows;
            this.reservation = reservation;
            if (reservation == null) {
                settled.set(true); // refused: nothing is held
            }
        }

        boolean allowed() {
            return reservation != null;
        }

        /**
         * The limiter's decision: allowed, or the window that refused; {@code null} when the
         * concurrency cap refused before the limiter was asked.
         */
        @Nullable
        Decision decision() {
            return decision;
        }

        /** The tenant's windows and the upstream cap's, as the limiter reported them. */
        List<Decision.Usage> windows() {
            return windows;
        }

        /**
         * Settles the reservation to the tokens the upstream used and frees the slot in the same
         * store call; a second
         * settlement does nothing. Returns once the store has applied it (a store failure is the
         * limiter's to count and log: settling never throws).
         *
         * @param tokens the tokens used, prompt and completion
         * @param ending how the response ended, for the metrics
         */
        void commit(long tokens, String ending) {
            if (settled.compareAndSet(false, true)) {
                this.ending = ending;
                this.settledTokens = tokens;
                try {
                    if (reservation != null) {
                        reservation.commit(tokens).toCompletableFuture().join();
                    }
                    metrics.settled(tenant, cap == null ? null : cap.model(), "committed", ending, tokens);
                } finally {
                    release();
                    open.remove(this); // last: a shutdown waiting for open() to drain then closes the store
                }
            }
        }

        /**
         * Gives the request and its tokens back, for work the upstream never did, and frees the
         * slot; a second settlement does nothing.
         *
         * @param ending how the response ended, for the metrics
         */
        void cancel(String ending) {
            if (settled.compareAndSet(false, true)) {
                this.ending = ending;
                this.settledTokens = 0;
                try {
                    if (reservation != null) {
                        reservation.cancel().toCompletableFuture().join();
                    }
                    metrics.settled(tenant, cap == null ? null : cap.model(), "cancelled", ending, 0);
                } finally {
                    release();
                    open.remove(this);
                }
            }
        }

        /** Stops renewing the slot: the settlement above released it in the store. */
        private void release() {
            if (reservation != null) {
                slots.settled(reservation);
            }
        }

        /** How the request ended, once settled; {@code null} before, or when it was refused. */
        @Nullable
        String ending() {
            return ending;
        }

        /** The tokens the settlement charged (0 when cancelled); -1 before it, or when refused. */
        long settledTokens() {
            return settledTokens;
        }

        boolean isSettled() {
            return settled.get();
        }
    }
}
