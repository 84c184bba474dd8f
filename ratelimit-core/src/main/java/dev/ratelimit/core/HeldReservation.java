package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Window;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A reservation and what the store recorded for it: one part per store call that admitted it (one
 * for an atomic store; one per scope when the store reserves scope by scope).
 */
final class HeldReservation implements Reservation {

    private static final CompletionStage<Void> DONE = CompletableFuture.completedFuture(null);

    private final Decision decision;
    private final List<Part> parts;
    private final Amounts estimate;
    private final @Nullable StoreGuard guard;
    private final @Nullable LongSupplier clock;
    private final AtomicBoolean settled = new AtomicBoolean();
    private final boolean concurrencyLimited;

    HeldReservation(
            Decision decision,
            List<Part> parts,
            Amounts estimate,
            @Nullable StoreGuard guard,
            @Nullable LongSupplier clock) {
        this(decision, parts, estimate, guard, clock, false);
    }

    private HeldReservation(
            Decision decision,
            List<Part> parts,
            Amounts estimate,
            @Nullable StoreGuard guard,
            @Nullable LongSupplier clock,
            boolean concurrencyLimited) {
        this.concurrencyLimited = concurrencyLimited;
        this.decision = decision;
        this.parts = List.copyOf(parts);
        this.estimate = estimate;
        this.guard = guard;
        this.clock = clock;
    }

    /** A reservation that holds nothing in the store: rejected, degraded or disabled. */
    static HeldReservation none(Decision decision) {
        return new HeldReservation(decision, List.of(), Amounts.none(), null, null);
    }

    /** A reservation its concurrency cap refused: it holds nothing in the store. */
    static HeldReservation concurrencyLimited(Decision decision) {
        return new HeldReservation(decision, List.of(), Amounts.none(), null, null, true);
    }

    /**
     * Gives back what earlier scopes reserved when a later one refused the request; the stage
     * completes once every cancel has been applied or has failed (failures are counted, not thrown).
     */
    static CompletableFuture<Void> cancelAll(StoreGuard guard, List<Part> parts, Amounts estimate, long nowMillis) {
        CompletableFuture<?>[] cancels = new CompletableFuture<?>[parts.size()];
        for (int i = 0; i < cancels.length; i++) {
            cancels[i] = guard.settle(parts.get(i).settlement(estimate, null, nowMillis))
                    .toCompletableFuture();
        }
        return CompletableFuture.allOf(cancels);
    }

    @Override
    public Decision decision() {
        return decision;
    }

    @Override
    public CompletionStage<Void> commit(Amounts actual) {
        if (actual == null) {
            throw new NullPointerException("actual must not be null");
        }
        return settle(actual);
    }

    @Override
    public CompletionStage<Void> cancel() {
        return settle(null);
    }

    @Override
    public boolean concurrencyLimited() {
        return concurrencyLimited;
    }

    @Override
    public CompletionStage<Boolean> renew() {
        if (settled.get() || guard == null || clock == null) {
            return CompletableFuture.completedFuture(!settled.get());
        }
        for (Part part : parts) {
            StoreRequest.Lease lease = part.request().lease();
            if (lease != null) {
                return guard.renewLease(lease, part.request().entryId(), clock.getAsLong());
            }
        }
        return CompletableFuture.completedFuture(true);
    }

    @Override
    public Optional<String> receipt() {
        return parts.isEmpty() ? Optional.empty() : Optional.of(Receipts.write(estimate, parts));
    }

    @Override
    public boolean isSettled() {
        return settled.get();
    }

    /** Settles to {@code actual}, or cancels when it is {@code null}. */
    private CompletionStage<Void> settle(@Nullable Amounts actual) {
        if (!settled.compareAndSet(false, true) || parts.isEmpty() || guard == null || clock == null) {
            return DONE;
        }
        long now = clock.getAsLong();
        CompletableFuture<?>[] stages = parts.stream()
                .filter(part -> part.changes(estimate, actual))
                .map(part ->
                        guard.settle(part.settlement(estimate, actual, now)).toCompletableFuture())
                .toArray(CompletableFuture<?>[]::new);
        return stages.length == 0 ? DONE : CompletableFuture.allOf(stages);
    }

    @Override
    public String toString() {
        return "Reservation{" + decision + ", estimate=" + estimate + ", settled=" + settled.get() + "}";
    }

    /** One store call's worth of a reservation: the request and the store's answer. */
    record Part(StoreRequest request, Evaluation evaluation) {

        /** The settlement of this part: to {@code actual}, or a cancel when it is {@code null}. */
        Settlement settlement(Amounts estimate, @Nullable Amounts actual, long nowMillis) {
            return new Settlement(
                    request.scopes(),
                    request.entryId(),
                    evaluation.nowMillis(),
                    estimate,
                    actual,
                    nowMillis,
                    request.lease());
        }

        /**
         * A commit that leaves every window at its estimate changes nothing: no store call, unless
         * the part holds a lease, which the settlement releases.
         */
        boolean changes(Amounts estimate, @Nullable Amounts actual) {
            if (actual == null || request.lease() != null) {
                return true;
            }
            Settlement probe = settlement(estimate, actual, StoreRequest.STORE_TIME);
            for (Window window : request.windows()) {
                if (probe.targetIn(window) != probe.estimateIn(window)) {
                    return true;
                }
            }
            return false;
        }
    }
}
