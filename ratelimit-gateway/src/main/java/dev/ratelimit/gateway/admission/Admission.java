package dev.ratelimit.gateway.admission;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.config.GatewayConfig.TierConfig;
import dev.ratelimit.gateway.config.UpstreamConfig;
import dev.ratelimit.gateway.metrics.GatewayMetrics;
import dev.ratelimit.genai.ModelCall;
import dev.ratelimit.genai.TokenUsage;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's one doorway to the limiter: a request is admitted when one reservation of its
 * estimated tokens and worst-case cost fits the tenant's windows and every budget of its {@link
 * Charge} (team, organisation, per-model limits, the model's upstream cap and the tier's share of it)
 * and the tenant has a free concurrency slot, all in one atomic store call (all or nothing: a
 * window's refusal takes no slot, a budget's refusal charges no window), and the admission is
 * settled exactly once when the response ends, to the tokens used and their cost ({@link
 * Ticket#commit}) or to nothing ({@link Ticket#cancel}), which frees the slot in the same store
 * call.
 */
public final class Admission {

    /** When a request the concurrency cap refused may retry: slots free as responses end. */
    public static final Duration CONCURRENCY_RETRY = Duration.ofSeconds(1);

    private final RateLimiter limiter;
    private final Slots slots;
    private final GatewayMetrics metrics;
    private final @Nullable BudgetAlerts alerts;
    private final Executor work;
    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final Set<Ticket> open = ConcurrentHashMap.newKeySet(); // admitted, not settled yet

    /**
     * Returns the leases this gateway holds on caps, then waits until the settlements the store did
     * not take at once have reached it, or the timeout passes; for a shutdown, before the store is
     * closed.
     *
     * @return whether none is left waiting
     */
    public boolean awaitSettlements(Duration timeout) {
        limiter.returnLeases(); // what this gateway leased of a cap and did not use is the others' at once
        try {
            return limiter.awaitSettlements(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * @param work where an asynchronous settlement goes on once the store has applied it (never the
     *     store client's I/O thread, whose other answers would wait behind it)
     */
    public Admission(
            RateLimiter limiter, Slots slots, GatewayMetrics metrics, @Nullable BudgetAlerts alerts, Executor work) {
        this.limiter = limiter;
        this.work = work;
        this.slots = slots;
        this.metrics = metrics;
        this.alerts = alerts;
        slots.bind(limiter);
    }

    /**
     * Admits one request of {@code tenant}: its reservation and its concurrency slot in one store
     * call; a refusal of either leaves nothing held. No thread waits for the store: the stage
     * completes on the thread its answer is handed to (the server's pool, for Redis).
     *
     * @return a stage completed with the ticket, or exceptionally with {@link
     *     RateLimiterUnavailableException} when the limiter fails closed and its store is down
     */
    public CompletionStage<Ticket> admit(
            TierConfig tier,
            Charge charge,
            ModelCall.Request request,
            UpstreamConfig.Protocol protocol,
            String operation) {
        Concurrency concurrency = slots.concurrency(tier.maxConcurrent());
        return ModelCall.reserveAsync(
                        limiter, charge.tenant(), tier.tier(), request, concurrency, metrics.genAi(protocol, operation))
                .thenApply(call -> ticket(charge, request.amounts(), call));
    }

    /**
     * The engine's ending of a response that ended as {@code ending} says: completed when the
     * upstream answered in full ({@code completed}, {@code stream_completed}), else named by it in
     * the GenAI client metrics' {@code error.type}.
     */
    static ModelCall.Ending endedAs(String ending) {
        return new ModelCall.Ending(ending, ending.equals("completed") || ending.equals("stream_completed"));
    }

    private Ticket ticket(Charge charge, Amounts estimate, ModelCall call) {
        Decision decision = call.decision();
        if (call.concurrencyLimited()) {
            return new Ticket(charge, estimate, null, decision.usage(), null);
        }
        if (!call.allowed()) {
            return new Ticket(charge, estimate, decision, decision.usage(), null);
        }
        Ticket ticket = new Ticket(charge, estimate, decision, decision.usage(), call);
        open.add(ticket);
        slots.held(call.reservation());
        if (alerts != null) {
            alerts.observe(charge.tenant(), charge, decision.usage());
        }
        return ticket;
    }

    /**
     * A ticket of a reservation admitted earlier, perhaps by another gateway, rebuilt from its
     * receipt ({@link dev.ratelimit.api.Reservation#receipt()}) to be settled here, once: it holds no
     * slot and is not among the requests in flight.
     *
     * @param estimate what the reservation charged, for the metrics
     * @throws IllegalArgumentException when {@code receipt} is not a receipt the limiter can read
     */
    public Ticket restore(Charge charge, Amounts estimate, String receipt) {
        ModelCall call = ModelCall.restore(limiter, charge.request(0, 0), receipt);
        return new Ticket(charge, estimate, call.decision(), List.of(), call);
    }

    /** The admissions not settled yet: requests in flight, for the shutdown. */
    public int open() {
        return open.size();
    }

    /**
     * Cancels every admission not settled yet and frees its slot, for a shutdown whose requests
     * outlived its deadline.
     *
     * @return how many were cancelled
     */
    public int cancelOpen(String ending) {
        int cancelled = 0;
        for (Ticket ticket : List.copyOf(open)) {
            if (!ticket.isSettled()) {
                ticket.cancel(ending);
                cancelled++;
            }
        }
        return cancelled;
    }

    /**
     * One admission: refused, or held until {@link #commit} or {@link #cancel}, whichever comes first.
     * The engine's call settles exactly once and records the GenAI client metrics; the ticket adds
     * the gateway's own: its meters, the concurrency slot's renewal and the requests in flight.
     */
    public final class Ticket {

        private final Charge charge;
        private final Amounts estimate;
        private final @Nullable Decision decision;
        private final List<Decision.Usage> windows;
        /** The engine's call; {@code null} when refused. */
        private final @Nullable ModelCall call;

        private Ticket(
                Charge charge,
                Amounts estimate,
                @Nullable Decision decision,
                List<Decision.Usage> windows,
                @Nullable ModelCall call) {
            this.charge = charge;
            this.estimate = estimate;
            this.decision = decision;
            this.windows = windows;
            this.call = call;
        }

        public boolean allowed() {
            return call != null;
        }

        /**
         * The limiter's decision: allowed, or the window that refused; {@code null} when the
         * concurrency cap refused before the limiter was asked.
         */
        @Nullable
        public Decision decision() {
            return decision;
        }

        /** The tenant's windows and the upstream cap's, as the limiter reported them. */
        public List<Decision.Usage> windows() {
            return windows;
        }

        /** What the request is charged to and priced at. */
        public Charge charge() {
            return charge;
        }

        /**
         * The receipt of the reservation, from which {@link Admission#restore} rebuilds it in any
         * gateway on the store; {@code null} when it holds nothing in the store.
         */
        @Nullable
        public String receipt() {
            return call == null ? null : call.receipt().orElse(null);
        }

        /** What the admission reserved: tokens and, for a priced model, the worst-case cost. */
        public Amounts estimate() {
            return estimate;
        }

        /**
         * Settles the reservation to the tokens the upstream used and their cost, and frees the slot
         * in the same store call; a second settlement does nothing. Returns once the store has
         * applied it (a store failure is the limiter's to count and log: settling never throws).
         *
         * @param usage the tokens used, by kind (input, cached input, cache writes, output)
         * @param ending how the response ended, for the metrics
         */
        public void commit(TokenUsage usage, String ending) {
            ModelCall admitted = call;
            if (admitted == null || admitted.settled()) {
                return;
            }
            Boolean first = null;
            try {
                first = admitted.commit(usage, endedAs(ending))
                        .toCompletableFuture()
                        .join();
            } finally {
                if (first == null || first) {
                    committed(admitted, ending);
                }
            }
        }

        /**
         * Settles as {@link #commit} does without waiting for the store: the stage completes, never
         * exceptionally, once the store has applied the settlement (or the limiter has queued it to
         * be retried), on one of the {@code work} threads; nothing may wait for it there.
         */
        public CompletionStage<Void> commitAsync(TokenUsage usage, String ending) {
            ModelCall admitted = call;
            if (admitted == null || admitted.settled()) {
                return DONE;
            }
            CompletionStage<Boolean> applied;
            try {
                applied = admitted.commit(usage, endedAs(ending));
            } catch (RuntimeException e) {
                finish();
                throw e;
            }
            return applied.handleAsync(
                    (first, failure) -> {
                        if (first == null || first) {
                            committed(admitted, ending);
                        }
                        return null;
                    },
                    work);
        }

        /** Counts a commit the store has (or the limiter has queued), then frees the slot. */
        private void committed(ModelCall admitted, String ending) {
            try {
                Amounts actual = admitted.charged();
                if (actual == null) {
                    return; // the settlement failed before it charged anything
                }
                long tokens = actual.get(Window.Unit.TOKENS);
                metrics.settled(charge.tenant(), charge.metricModel(), "committed", ending, tokens);
                metrics.overrun(charge.metricModel(), estimate, actual);
                if (charge.price() != null) {
                    metrics.spent(
                            charge.tenant(),
                            charge.team() == null ? null : charge.team().name(),
                            charge.metricModel(),
                            actual.get(Window.Unit.USD_MICROS));
                }
            } finally {
                finish();
            }
        }

        /** Frees the slot, then forgets the ticket: last, as a shutdown waiting for open() to drain then closes the store. */
        private void finish() {
            release();
            open.remove(this);
        }

        /**
         * Gives the request and its tokens back, for work the upstream never did, and frees the
         * slot; a second settlement does nothing.
         *
         * @param ending how the response ended, for the metrics
         */
        public void cancel(String ending) {
            ModelCall admitted = call;
            if (admitted == null || admitted.settled()) {
                return;
            }
            Boolean first = null;
            try {
                first = admitted.cancel(endedAs(ending)).toCompletableFuture().join();
                if (first) {
                    metrics.settled(charge.tenant(), charge.metricModel(), "cancelled", ending, 0);
                }
            } finally {
                if (first == null || first) {
                    finish();
                }
            }
        }

        /** Stops renewing the slot: the settlement above released it in the store. */
        private void release() {
            if (call != null) {
                slots.settled(call.reservation());
            }
        }

        /**
         * Keeps the reservation for a settlement much later (a batch's, hours away) but frees its
         * concurrency slot, which is then no longer renewed and lapses with its lease, and stops
         * counting it among the requests in flight that a shutdown waits for.
         */
        public void hold() {
            if (call != null) {
                call.hold(); // a batch: not one call's duration or usage
            }
            finish();
        }

        /** How the request ended, once settled; {@code null} before, or when it was refused. */
        @Nullable
        public String ending() {
            ModelCall.Ending ended = call == null ? null : call.ending();
            return ended == null ? null : ended.name();
        }

        /** The tokens the settlement charged (0 when cancelled); -1 before it, or when refused. */
        public long settledTokens() {
            Amounts charged = call == null ? null : call.charged();
            return charged == null ? -1 : charged.get(Window.Unit.TOKENS);
        }

        /**
         * The micro-dollars the settlement charged (0 when cancelled); -1 before it, when refused, or
         * for a model without a price.
         */
        public long settledMicros() {
            Amounts charged = call == null ? null : call.charged();
            return charged == null || charge.price() == null ? -1 : charged.get(Window.Unit.USD_MICROS);
        }

        boolean isSettled() {
            return call == null || call.settled();
        }
    }
}
