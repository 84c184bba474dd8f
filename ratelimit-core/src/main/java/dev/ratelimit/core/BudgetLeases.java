package dev.ratelimit.core;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Leasing;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The leases one limiter holds on {@linkplain SharedBudget#leasing() leased} shared budgets: per
 * budget a slice taken from the store ({@link WindowStore#takeLease}) and spent here, in memory and
 * exactly, until it ends or runs low, when what it did not use goes back ({@link
 * WindowStore#returnLease}).
 *
 * <p>A reservation naming leased budgets takes its share of each from that budget's slice and
 * charges the rest (the user's windows, the budgets not leased, and a leased budget whose slice
 * cannot cover it) in the store as without leasing; when the store call rejects, the shares go back
 * to the slices. A slice that cannot cover a share is returned and a new lease taken, sized by the
 * recent use; a share larger than a lease may be, a budget whose lease the store just refused or
 * failed to take, and every budget while the circuit breaker is open (the store is down),
 * is reserved directly. Settling adjusts the slice the share came from while that lease lasts: a
 * refund goes back to it, an overrun is taken from it and what it cannot cover is charged to the
 * store as a settlement of an entry of its own; after the lease has ended, a refund stays counted
 * (the lease's entry keeps it until it leaves the window) and an overrun is charged to the store.
 *
 * <p>A lease is spent only until its end on this instance's clock, measured from before the call
 * that took it: with the store's own time, the store's stamp is at least that late. It ends at the
 * first request after its end or when it runs low; when that request takes the next lease, the
 * lease ended is returned in the same store call ({@link WindowStore#exchangeLease}), so under
 * steady demand each lease costs the budget's keys one call. It is returned in a call of its own
 * when no lease follows it: on {@link #returnAll}, when the next lease is not taken (the instance
 * reserves directly for a while), and (on the real clock) by a timer a lease's duration after its
 * end when no request came, so an instance that goes quiet does not park its slice until the entry
 * leaves the window; on an injected clock no timer runs, so tests decide when time passes. A return
 * that fails (alone or in an exchange), and the give-back of a lease whose taking may have run, are
 * made again off the request's path until the store answers or the lease's entry has left the
 * window. Every lease call goes through the guard's circuit breaker and store meters.
 */
final class BudgetLeases {

    /** The requests an instance sees within a lease's duration before it leases a budget adaptively. */
    static final int BUSY = 4;

    /** The wait before a failed return is made again; it doubles after each failure, up to a second. */
    private static final long FIRST_RETRY_MILLIS = 50;

    private final WindowStore store;
    private final StoreGuard guard;
    private final @Nullable Clock clock;
    /** The wall clock, for the end of a lease on the real clock as {@link #held} shows it; never for a decision. */
    private static final Clock WALL_CLOCK = Clock.systemUTC();

    private final ConcurrentHashMap<SharedBudget, Slice> slices = new ConcurrentHashMap<>();

    BudgetLeases(StoreGuard guard, @Nullable Clock clock) {
        this.guard = guard;
        this.store = guard.store();
        this.clock = clock;
    }

    /** Tells whether any of {@code shared} is leased (and nothing in the arguments is missing). */
    static boolean anyLeased(@Nullable List<SharedBudget> shared, @Nullable Amounts estimate) {
        if (shared == null || estimate == null) {
            return false;
        }
        for (SharedBudget budget : shared) {
            if (budget != null && budget.leasing() != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * Reserves with the leased budgets' shares taken from their slices: {@code direct} makes the
     * store reservation of the rest.
     */
    Reservation reserve(List<SharedBudget> shared, Amounts estimate, Function<List<SharedBudget>, Reservation> direct) {
        Taken taken = take(shared, estimate);
        Reservation reservation;
        try {
            reservation = direct.apply(taken.direct());
        } catch (RuntimeException e) {
            taken.giveBack();
            throw e;
        }
        return taken.wrap(reservation);
    }

    /**
     * {@link #reserve} for the asynchronous path. The shares are taken before the store call is sent;
     * when that needs a lease call (a lease taken, renewed or returned), on a thread of the lease
     * calls' pool, not the caller's. (Another request may run a slice low between the look and the
     * take: that one's lease call is then made on the caller's thread.)
     */
    CompletionStage<Reservation> reserveAsync(
            List<SharedBudget> shared,
            Amounts estimate,
            Function<List<SharedBudget>, CompletionStage<Reservation>> direct) {
        if (needsStore(shared, estimate)) {
            return CompletableFuture.supplyAsync(() -> take(shared, estimate), Calls.POOL)
                    .thenCompose(taken -> reserveAsync(taken, direct));
        }
        Taken taken;
        try {
            taken = take(shared, estimate);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return reserveAsync(taken, direct);
    }

    private static CompletionStage<Reservation> reserveAsync(
            Taken taken, Function<List<SharedBudget>, CompletionStage<Reservation>> direct) {
        CompletionStage<Reservation> stage;
        try {
            stage = direct.apply(taken.direct());
        } catch (RuntimeException e) {
            taken.giveBack();
            return CompletableFuture.failedFuture(e);
        }
        return stage.whenComplete((reservation, failure) -> {
                    if (failure != null) {
                        taken.giveBack();
                    }
                })
                .thenApply(reservation -> taken.wrap(reservation));
    }

    /** Returns every slice held, so its unused part is at once available to others. */
    void returnAll() {
        for (Slice slice : slices.values()) {
            slice.end(false);
        }
    }

    /** The leases held now, one per budget at most, for {@link dev.ratelimit.api.RateLimiter#leases()}. */
    List<Leasing.Held> held() {
        List<Leasing.Held> held = new ArrayList<>();
        for (Slice slice : slices.values()) {
            Leasing.Held lease = slice.held();
            if (lease != null) {
                held.add(lease);
            }
        }
        return List.copyOf(held);
    }

    /** Whether taking the shares of {@code shared} would make a lease call now. */
    private boolean needsStore(List<SharedBudget> shared, Amounts estimate) {
        for (SharedBudget budget : shared) {
            Leasing leasing = budget == null ? null : budget.leasing();
            if (leasing != null
                    && slices.computeIfAbsent(budget, key -> new Slice(key, leasing))
                            .needsStore(estimate)) {
                return true;
            }
        }
        return false;
    }

    private Taken take(List<SharedBudget> shared, Amounts estimate) {
        List<SharedBudget> direct = new ArrayList<>(shared.size());
        List<Share> shares = new ArrayList<>(2);
        for (SharedBudget budget : shared) {
            Leasing leasing = budget == null ? null : budget.leasing();
            if (leasing == null) {
                direct.add(budget);
                continue;
            }
            Slice slice = slices.computeIfAbsent(budget, key -> new Slice(key, leasing));
            Share share = slice.take(estimate);
            if (share != null) {
                shares.add(share);
            } else {
                direct.add(new SharedBudget(budget.name(), budget.windows())); // the same logs, charged per request
            }
        }
        return new Taken(direct, shares);
    }

    /** The threads that make the lease calls of asynchronous reservations, made when first needed. */
    private static final class Calls {
        static final java.util.concurrent.ExecutorService POOL = Executors.newCachedThreadPool(task -> {
            Thread thread = new Thread(task, "ratelimit-lease-calls");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** The one thread that returns leases at their end on the real clock, made when first needed. */
    private static final class Timer {
        static final ScheduledExecutorService RETURNS = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "ratelimit-lease-returns");
            thread.setDaemon(true);
            return thread;
        });
    }

    private long localMillis() {
        return clock != null ? clock.millis() : System.nanoTime() / 1_000_000;
    }

    private long storeMillis() {
        return clock != null ? clock.millis() : StoreRequest.STORE_TIME;
    }

    /** What one reservation took from slices, and the budgets it reserves in the store. */
    private record Taken(List<SharedBudget> direct, List<Share> shares) {

        void giveBack() {
            for (Share share : shares) {
                share.slice().settle(share, null);
            }
        }

        Reservation wrap(Reservation reservation) {
            if (shares.isEmpty()) {
                return reservation;
            }
            if (!reservation.decision().allowed()) {
                giveBack();
                return reservation;
            }
            return new LeasedReservation(reservation, this);
        }
    }

    /** A lease ended and not yet returned: its stamp and what it keeps, the rest going back. */
    private record Ended(BudgetLease lease, long stamp, long requests, Amounts kept) {}

    /** A share of one request (1 request, its estimate) taken from a slice: the lease it came from. */
    private record Share(Slice slice, long generation, Amounts amounts) {}

    /** A reservation whose leased shares settle against their slices, the rest in the store. */
    private static final class LeasedReservation implements Reservation {
        private final Reservation delegate;
        private final Taken taken;
        private final AtomicBoolean settled = new AtomicBoolean();

        private final Decision decision;

        LeasedReservation(Reservation delegate, Taken taken) {
            this.delegate = delegate;
            this.taken = taken;
            Decision direct = delegate.decision();
            List<Decision.Usage> usage = new ArrayList<>(direct.usage());
            for (Share share : taken.shares()) {
                usage.addAll(share.slice().usage());
            }
            this.decision = new Decision(
                    direct.allowed(),
                    direct.limit(),
                    direct.remaining(),
                    direct.retryAfter(),
                    direct.window(),
                    direct.resetAfter(),
                    direct.degraded(),
                    direct.budget(),
                    direct.tooLarge(),
                    usage,
                    direct.unchecked(),
                    direct.shadowRefusals());
        }

        /**
         * The store's decision, its usage completed by each leased budget's windows as the store
         * counted them at this instance's last lease call on the budget (leases included), less the
         * time since.
         */
        @Override
        public Decision decision() {
            return decision;
        }

        @Override
        public CompletionStage<Void> commit(Amounts actual) {
            if (actual == null || !settled.compareAndSet(false, true)) {
                return delegate.commit(actual);
            }
            List<CompletableFuture<Void>> charged = new ArrayList<>();
            for (Share share : taken.shares()) {
                charged.add(share.slice().settle(share, actual).toCompletableFuture());
            }
            charged.add(delegate.commit(actual).toCompletableFuture());
            return CompletableFuture.allOf(charged.toArray(new CompletableFuture<?>[0]));
        }

        @Override
        public CompletionStage<Void> cancel() {
            if (settled.compareAndSet(false, true)) {
                taken.giveBack();
            }
            return delegate.cancel();
        }

        @Override
        public boolean concurrencyLimited() {
            return delegate.concurrencyLimited();
        }

        @Override
        public CompletionStage<Boolean> renew() {
            return delegate.renew();
        }

        @Override
        public boolean isSettled() {
            return delegate.isSettled();
        }

        /**
         * The receipt of what the request holds in the store. Its leased shares are not in it: they
         * belong to this process's slices, which end within a second and are returned with what was
         * used, so a reservation settled elsewhere, later, leaves them as estimated.
         */
        @Override
        public java.util.Optional<String> receipt() {
            return delegate.receipt();
        }

        @Override
        public String toString() {
            return "LeasedReservation{" + delegate + ", shares="
                    + taken.shares().size() + "}";
        }
    }

    /**
     * One budget's slice: the lease held (or none), what is left of it and what was used, per unit
     * ({@link Window.Unit#REQUESTS} included), and the size of the next lease. Guarded by its lock;
     * the store calls that take and return leases are made under it.
     */
    private final class Slice {
        private final StoreRequest.Scope scope;
        private final Leasing leasing;
        private final long durationMillis;
        private final long longestMillis;
        private final Map<Window.Unit, Long> most = new LinkedHashMap<>();
        private final Map<Window.Unit, Long> next = new LinkedHashMap<>();
        private final Map<Window.Unit, Long> left = new LinkedHashMap<>();
        private final Map<Window.Unit, Long> used = new LinkedHashMap<>();
        private @Nullable BudgetLease lease;
        // each window's count and reset as the store answered the last lease call, and when
        private long[] counted = new long[0];
        private long[] resets = new long[0];
        private long countedAt;
        private long stamp;
        private long takenAt;
        private long deadline;
        private long generation;
        private long directUntil = Long.MIN_VALUE;
        // the times of this instance's last requests on the budget, to tell whether a lease would pay
        private final long[] recent = new long[BUSY];
        private long seen;

        Slice(SharedBudget budget, Leasing leasing) {
            this.scope = StoreRequest.Scope.shared(budget.name(), Plan.ordered(budget.windows(), "budget"));
            this.leasing = leasing;
            long shortest = Long.MAX_VALUE;
            long longest = 0;
            for (Window window : scope.windows()) {
                shortest = Math.min(shortest, window.lengthMillis());
                longest = Math.max(longest, window.lengthMillis());
                long fixed = window.countsRequests()
                        ? leasing.requests()
                        : leasing.amounts().get(window.unit());
                long bound = leasing.adaptive() ? Math.max(1, window.limit() / 10) : fixed;
                if (window.countsRequests()) {
                    bound = Math.min(bound, Leasing.MAX_REQUESTS);
                }
                most.merge(window.unit(), bound, Math::min);
            }
            this.longestMillis = longest;
            java.time.Duration duration = leasing.duration();
            this.durationMillis = duration != null
                    ? duration.toMillis()
                    : Math.max(1, Math.min(BudgetLease.MAX_DURATION_MILLIS, shortest / 10));
        }

        /** Takes one request's share, from the lease held or a new one; {@code null} when it cannot. */
        synchronized @Nullable Share take(Amounts estimate) {
            long now = localMillis(); // under the lock: a share is taken at this time, before the deadline
            recent[(int) (seen++ % BUSY)] = now;
            Ended ended = null;
            if (lease != null && (now >= deadline || !covers(estimate))) {
                ended = finish(now < deadline);
            }
            if (lease == null) {
                if (now < directUntil || !busy(now) || guard.isOpen() || !fits(estimate)) {
                    giveBack(ended);
                    return null;
                }
                if (!open(estimate, now, ended)) {
                    return null;
                }
            }
            for (Window.Unit unit : most.keySet()) {
                long need = need(unit, estimate);
                left.merge(unit, -need, Long::sum);
                used.merge(unit, need, Long::sum);
            }
            return new Share(this, generation, estimate);
        }

        /**
         * Whether {@link #take} would make a store call now: the lease held ends (returned, alone or
         * with the next lease's take), or a lease would be taken.
         */
        synchronized boolean needsStore(Amounts estimate) {
            long now = localMillis();
            boolean ends = lease != null && (now >= deadline || !covers(estimate));
            if (lease != null && !ends) {
                return false;
            }
            // busy(now) once this request is counted, as take counts it
            boolean busy = !leasing.adaptive()
                    || (seen + 1 >= BUSY && now - recent[(int) ((seen + 1) % BUSY)] < durationMillis);
            return ends || (now >= directUntil && busy && !guard.isOpen() && fits(estimate));
        }

        /**
         * A cancel ({@code actual == null}) or commit of a share: see the class comment. The stage
         * completes once an overrun beyond the slice is charged (or queued to be).
         */
        synchronized CompletionStage<Void> settle(Share share, @Nullable Amounts actual) {
            boolean current = share.generation() == generation && lease != null;
            Amounts overrun = Amounts.none();
            for (Window.Unit unit : most.keySet()) {
                long taken = need(unit, share.amounts());
                long target = actual == null
                        ? 0
                        : unit.equals(Window.Unit.REQUESTS) ? 1 : actual.has(unit) ? actual.get(unit) : taken;
                long change = target - taken;
                if (current && change < 0) {
                    left.merge(unit, -change, Long::sum);
                    used.merge(unit, change, Long::sum);
                } else if (change > 0) {
                    long covered = current ? Math.min(change, left.getOrDefault(unit, 0L)) : 0;
                    if (covered > 0) {
                        left.merge(unit, -covered, Long::sum);
                        used.merge(unit, covered, Long::sum);
                    }
                    if (change > covered && !unit.equals(Window.Unit.REQUESTS)) {
                        overrun = overrun.and(unit, change - covered);
                    }
                }
            }
            if (overrun.isZero()) {
                return CompletableFuture.completedFuture(null);
            }
            long now = storeMillis();
            // an entry of its own, never rejected: an exact sliding window charges it at now
            return guard.settle(new Settlement(
                    List.of(scope),
                    EntryIds.next(),
                    now == StoreRequest.STORE_TIME ? 0 : now,
                    Amounts.none(),
                    overrun,
                    now,
                    null));
        }

        /** Returns the lease held, alone: what was not used goes back to the store. */
        synchronized void end(boolean ranLow) {
            giveBack(finish(ranLow));
        }

        /**
         * Ends the lease held and tells what goes back to the store, which {@link #open} returns with
         * the next lease's take or {@link #giveBack} alone. {@code ranLow} tells a lease that could
         * not cover a request before its end, after which the next is twice its size in each unit it
         * had used at least half of (the units that ran low); every other unit's next lease is twice
         * what was used of it, so a unit that does not bind (tokens while the requests run out) does
         * not grow to its ceiling and park the budget.
         */
        private @Nullable Ended finish(boolean ranLow) {
            BudgetLease held = lease;
            if (held == null) {
                return null;
            }
            lease = null;
            generation++;
            for (Window.Unit unit : most.keySet()) {
                long size = unit.equals(Window.Unit.REQUESTS)
                        ? held.requests()
                        : held.amounts().get(unit);
                long spent = used.getOrDefault(unit, 0L);
                long grown = ranLow && 2 * spent >= size ? 2 * size : 2 * spent;
                next.put(unit, Math.min(most.getOrDefault(unit, 0L), Math.max(1, grown)));
            }
            Amounts kept = Amounts.none();
            for (Map.Entry<Window.Unit, Long> entry : used.entrySet()) {
                if (!entry.getKey().equals(Window.Unit.REQUESTS) && entry.getValue() > 0) {
                    kept = kept.and(entry.getKey(), entry.getValue());
                }
            }
            Ended ended = new Ended(held, stamp, used.getOrDefault(Window.Unit.REQUESTS, 0L), kept);
            left.clear();
            used.clear();
            return ended;
        }

        /**
         * Returns an ended lease in a call of its own: when no lease is taken after it (the instance
         * is idle, stops, or reserves directly for a while). When the store is down or fails, the
         * return is made again off the request's path ({@link #returnUntilAnswered}).
         */
        private void giveBack(@Nullable Ended ended) {
            if (ended == null) {
                return;
            }
            if (!guard.isOpen()) {
                try {
                    guard.lease(() -> {
                        store.returnLease(ended.lease(), ended.stamp(), ended.requests(), ended.kept(), storeMillis());
                        return null;
                    });
                    return;
                } catch (RuntimeException e) {
                    // made again below
                }
            }
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(durationMillis + longestMillis);
            retryReturn(ended.lease(), ended.stamp(), ended.requests(), ended.kept(), until, FIRST_RETRY_MILLIS);
        }

        /**
         * Whether a lease would pay: an adaptive lease is taken only once this instance has seen
         * {@link #BUSY} requests on the budget within a lease's duration. Thinner traffic reserves per
         * request, since a lease that serves one request costs two calls (its taking and its return)
         * where a reservation costs one.
         */
        private boolean busy(long now) {
            return !leasing.adaptive() || (seen >= BUSY && now - recent[(int) (seen % BUSY)] < durationMillis);
        }

        /** Whether what is left covers one request's share. */
        private boolean covers(Amounts estimate) {
            for (Window.Unit unit : most.keySet()) {
                if (need(unit, estimate) > left.getOrDefault(unit, 0L)) {
                    return false;
                }
            }
            return true;
        }

        /** Whether one request's share fits in a lease at all. */
        private boolean fits(Amounts estimate) {
            for (Window.Unit unit : most.keySet()) {
                if (need(unit, estimate) > most.getOrDefault(unit, 0L)) {
                    return false;
                }
            }
            return true;
        }

        /**
         * Takes a new lease covering at least {@code estimate}, in the same store call that returns
         * {@code ended} when there is one ({@link WindowStore#exchangeLease}), so a lease renewed
         * under steady demand costs one call; {@code false} when the store refuses (the return still
         * applies) or fails (the return is made again off the request's path: a second return of a
         * lease changes nothing).
         */
        private boolean open(Amounts estimate, long now, @Nullable Ended ended) {
            long requests = 0;
            Amounts amounts = Amounts.none();
            Map<Window.Unit, Long> sizes = new LinkedHashMap<>();
            for (Window.Unit unit : most.keySet()) {
                long fixed = unit.equals(Window.Unit.REQUESTS)
                        ? leasing.requests()
                        : leasing.amounts().get(unit);
                long size = leasing.adaptive() ? Math.max(need(unit, estimate), next.getOrDefault(unit, 1L)) : fixed;
                size = Math.min(size, most.getOrDefault(unit, 0L));
                sizes.put(unit, size);
                if (unit.equals(Window.Unit.REQUESTS)) {
                    requests = size;
                } else if (size > 0) {
                    amounts = amounts.and(unit, size);
                }
            }
            BudgetLease taking = new BudgetLease(scope, requests, amounts, EntryIds.next(), durationMillis);
            Evaluation evaluation;
            long at = storeMillis();
            try {
                evaluation = guard.lease(() -> ended == null
                        ? store.takeLease(taking, at)
                        : store.exchangeLease(
                                ended.lease(), ended.stamp(), ended.requests(), ended.kept(), taking, at));
            } catch (RuntimeException e) {
                boolean inDoubt = StoreGuard.mayHaveRun(e);
                // off the request's path: a store that timed out may time out again
                long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(durationMillis + longestMillis);
                if (ended != null) {
                    Timer.RETURNS.execute(() -> returnUntilAnswered(
                            ended.lease(), ended.stamp(), ended.requests(), ended.kept(), until, FIRST_RETRY_MILLIS));
                }
                if (inDoubt) {
                    Timer.RETURNS.execute(() -> returnUntilAnswered(
                            taking, Settlement.IN_DOUBT, 0, Amounts.none(), until, FIRST_RETRY_MILLIS));
                }
                directUntil = now + durationMillis;
                return false;
            }
            if (!evaluation.isAllowed()) {
                // the budget has no room for a lease: reserve per request for a while, then smaller
                directUntil = now + durationMillis;
                for (Window.Unit unit : most.keySet()) {
                    next.put(unit, Math.max(1, sizes.getOrDefault(unit, 0L) / 2));
                }
                return false;
            }
            lease = taking;
            stamp = taking.stampMillis(evaluation.nowMillis());
            int windows = scope.windows().size();
            counted = new long[windows];
            resets = new long[windows];
            for (int i = 0; i < windows; i++) {
                counted[i] = Math.max(0, evaluation.used(i));
                resets[i] = Math.max(0, evaluation.resetAfterMillis(i));
            }
            countedAt = now;
            takenAt = now;
            deadline = now + durationMillis;
            left.clear();
            used.clear();
            left.putAll(sizes);
            if (clock == null) {
                returnAtEnd(generation, 2 * durationMillis);
            }
            return true;
        }

        /**
         * Returns a lease on the timer's thread, and again after each failure ({@code delayMillis},
         * doubling up to a second) until the store answers or {@code untilNanos} passes: by then the
         * lease's entry has left every window (its duration plus the longest window after it was
         * taken), so the return would change nothing. Returning again is safe: a second return of a
         * lease changes nothing, and one whose taking is in doubt gives back only what was recorded.
         */
        private void returnUntilAnswered(
                BudgetLease lease, long stampMillis, long requests, Amounts kept, long untilNanos, long delayMillis) {
            try {
                guard.lease(() -> {
                    store.returnLease(lease, stampMillis, requests, kept, storeMillis());
                    return null;
                });
            } catch (RuntimeException e) {
                retryReturn(lease, stampMillis, requests, kept, untilNanos, delayMillis);
            }
        }

        @SuppressWarnings("FutureReturnValueIgnored") // it returns the lease or gives up; no answer to wait for
        private void retryReturn(
                BudgetLease lease, long stampMillis, long requests, Amounts kept, long untilNanos, long delayMillis) {
            if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis) >= untilNanos) {
                return; // its entry has left the window: the slice it held is free again
            }
            Timer.RETURNS.schedule(
                    () -> returnUntilAnswered(
                            lease, stampMillis, requests, kept, untilNanos, Math.min(1_000, 2 * delayMillis)),
                    delayMillis,
                    TimeUnit.MILLISECONDS);
        }

        @SuppressWarnings("FutureReturnValueIgnored") // it returns the lease or does nothing; no answer to wait for
        private void returnAtEnd(long leased, long delayMillis) {
            Timer.RETURNS.schedule(() -> expire(leased), Math.max(1, delayMillis), TimeUnit.MILLISECONDS);
        }

        /**
         * The timer's task: returns the lease of generation {@code leased} alone if it is still held a
         * lease's duration after its end. Within that time a request of a busy instance ends it and
         * returns it with the next lease's take, in one call.
         */
        private synchronized void expire(long leased) {
            if (leased != generation || lease == null) {
                return;
            }
            long now = localMillis();
            long idle = deadline + durationMillis;
            if (now < idle) {
                returnAtEnd(leased, idle - now);
            } else {
                end(false);
            }
        }

        /** The budget's windows as the store counted them at the last lease call, its resets less the time since. */
        synchronized List<Decision.Usage> usage() {
            List<Decision.Usage> usage = new ArrayList<>(counted.length);
            long since = localMillis() - countedAt;
            for (int i = 0; i < counted.length; i++) {
                usage.add(new Decision.Usage(
                        scope.windows().get(i),
                        scope.subject(),
                        counted[i],
                        java.time.Duration.ofMillis(Math.max(0, resets[i] - since))));
            }
            return usage;
        }

        /** The lease held, as a snapshot; {@code null} when none is held or it has ended. */
        synchronized Leasing.@Nullable Held held() {
            long now = localMillis();
            if (lease == null || now >= deadline) {
                return null;
            }
            Map<Window.Unit, Long> size = new LinkedHashMap<>();
            Map<Window.Unit, Long> spent = new LinkedHashMap<>();
            for (Window.Unit unit : most.keySet()) {
                spent.put(unit, used.getOrDefault(unit, 0L));
                size.put(unit, left.getOrDefault(unit, 0L) + spent.get(unit));
            }
            // the deadline is on this instance's clock: the injected one's epoch, or nanoTime's scale,
            // shown then on the wall clock (for display only: no decision reads it)
            java.time.Instant endsAt = clock != null
                    ? java.time.Instant.ofEpochMilli(deadline)
                    : WALL_CLOCK.instant().plusMillis(deadline - now);
            return new Leasing.Held(scope.subject(), size, spent, endsAt);
        }

        private long need(Window.Unit unit, Amounts estimate) {
            return unit.equals(Window.Unit.REQUESTS) ? 1 : estimate.get(unit);
        }

        @Override
        public synchronized String toString() {
            return "Slice{" + scope.subject() + ", left=" + left + ", used=" + used + ", takenAt=" + takenAt + "}";
        }
    }
}
