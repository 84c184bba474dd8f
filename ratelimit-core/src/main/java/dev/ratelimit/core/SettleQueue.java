package dev.ratelimit.core;

import dev.ratelimit.api.Window;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Settlements the store could not take when they were made (it failed, timed out, or the circuit
 * breaker was open), kept in memory and retried with backoff until the store takes them.
 *
 * <p>Retrying is safe because a store applies a settlement once ({@link Settlement}: idempotent by
 * entry id), even when an earlier attempt reached it and only its reply was lost. A settlement is
 * given up, counted and logged, only when retrying it can no longer change anything or could change
 * it twice: once its reservation has left every window it touches and its lease has passed, or, for
 * one that touches a window of an amount, once the store's proof of an earlier attempt may have
 * lapsed ({@link Settlement#repeatGuardMillis()}). The queue is bounded; a settlement that finds it
 * full is given up the same way. What a given-up settlement leaves is its estimate, standing until
 * its window passes: more charged than used, never less.
 *
 * <p>One daemon thread, started with the first settlement queued, retries in order of arrival, in
 * batches, each attempt bounded by the store's own timeout; a failed batch waits 50 ms, doubling
 * up to 2 s, before the next, unless another store call answers meanwhile: then the store is back
 * and the wait is cut short. Nothing is retried across a restart of the process: a process killed
 * loses what it held here.
 */
final class SettleQueue {

    static final int DEFAULT_CAPACITY = 100_000;
    private static final int BATCH = 64;
    private static final long FIRST_BACKOFF_MILLIS = 50;
    private static final long LAST_BACKOFF_MILLIS = 2_000;
    /** A retry stops this long before the store's proof of an earlier attempt lapses. */
    private static final long GUARD_MARGIN_MILLIS = 1_000;

    private static final Clock WALL_CLOCK = Clock.systemUTC();
    private static final System.Logger LOG = System.getLogger(SlidingWindowRateLimiter.class.getName());

    private final WindowStore store;
    private final String name;
    private final Recorder metrics;
    private final int capacity;
    private final LongSupplier nanoTime;
    private final Deque<Pending> pending = new ArrayDeque<>(); // guarded by this
    private @Nullable ScheduledExecutorService retrier; // guarded by this
    private boolean scheduled; // guarded by this: a retry round is scheduled or running
    private int inFlight; // guarded by this: settlements taken for the running round
    private long backoffMillis = FIRST_BACKOFF_MILLIS; // guarded by this
    private long rounds; // guarded by this: the number of the latest round scheduled
    private volatile boolean backingOff; // the latest round waits out a backoff: read without the lock

    SettleQueue(WindowStore store, String name, Recorder metrics, int capacity, LongSupplier nanoTime) {
        this.store = store;
        this.name = name;
        this.metrics = metrics;
        this.capacity = capacity;
        this.nanoTime = nanoTime;
    }

    /** One settlement waiting for the store, with the time after which retrying it is given up. */
    private record Pending(Settlement settlement, long queuedNanos, long giveUpNanos) {}

    /**
     * Queues a settlement the store did not take; it is retried until applied or given up.
     *
     * @param settlement the settlement
     */
    void add(Settlement settlement) {
        long now = nanoTime.getAsLong();
        Pending entry = new Pending(settlement, now, now + TimeUnit.MILLISECONDS.toNanos(horizonMillis(settlement)));
        synchronized (this) {
            if (pending.size() + inFlight >= capacity) {
                giveUp(List.of(settlement), "queue_full");
                return;
            }
            pending.addLast(entry);
            schedule(0);
        }
    }

    /**
     * How long retrying a settlement can change what it should, once, from when it is queued: until
     * its reservation has left every window it touches and its lease has passed; for one that
     * touches a window of an amount, no longer than the store keeps the proof of an earlier attempt.
     * A calendar window holds a reservation until its period ends, which may be later than its
     * nominal length (a 25-hour day), so that end is what counts for it.
     */
    static long horizonMillis(Settlement settlement) {
        long guard = settlement.repeatGuardMillis();
        if (guard > 0) {
            return Math.max(0, guard - GUARD_MARGIN_MILLIS);
        }
        long longest = 0;
        for (StoreRequest.Scope scope : settlement.scopes()) {
            for (Window window : scope.windows()) {
                longest = Math.max(longest, heldMillis(window, settlement));
            }
        }
        StoreRequest.Lease lease = settlement.lease();
        return lease == null ? longest : Math.max(longest, lease.ttlMillis());
    }

    /**
     * How long, at most, a window holds the settlement's reservation from when the settlement is
     * queued: its length, or until the end of the calendar period the reservation was made in. For a
     * cancel in doubt the reservation's time is unknown (the store may run it late), so until the
     * end of the period after the one holding this process's wall clock.
     */
    private static long heldMillis(Window window, Settlement settlement) {
        Window.Calendar calendar = window.calendar();
        if (calendar == null) {
            return window.lengthMillis();
        }
        if (!settlement.isInDoubt()) {
            long reservedAt = settlement.reservedAtMillis();
            return calendar.endMillis(reservedAt) - reservedAt;
        }
        long now = WALL_CLOCK.millis();
        return calendar.endMillis(calendar.endMillis(now)) - now;
    }

    /** Returns the settlements waiting or being retried. */
    synchronized int size() {
        return pending.size() + inFlight;
    }

    /** Returns how long the oldest waiting settlement has waited, in milliseconds; 0 when none. */
    synchronized double oldestAgeMillis() {
        Pending oldest = pending.peekFirst();
        return oldest == null ? 0 : (nanoTime.getAsLong() - oldest.queuedNanos()) / 1e6;
    }

    /**
     * Waits until every queued settlement has been applied or given up, or the timeout passes.
     *
     * @return {@code true} when nothing is left waiting
     */
    boolean awaitEmpty(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (!pending.isEmpty() || inFlight > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }
    }

    /**
     * Tells the queue the store answered a call: a round waiting out a backoff runs now (the waiting
     * one, when its time comes, does nothing), its backoff starting again from the first. Costs one
     * volatile read when nothing waits.
     */
    void storeAnswered() {
        if (!backingOff) {
            return;
        }
        synchronized (this) {
            if (!backingOff) {
                return; // the round started, or another answer scheduled it
            }
            backingOff = false;
            scheduled = false;
            backoffMillis = FIRST_BACKOFF_MILLIS;
            schedule(0);
        }
    }

    /** Returns whether the next round waits out a backoff. */
    boolean backingOff() {
        return backingOff;
    }

    private void schedule(long delayMillis) {
        // guarded by this
        if (scheduled) {
            return;
        }
        scheduled = true;
        if (retrier == null) {
            retrier = Executors.newSingleThreadScheduledExecutor(task -> {
                Thread thread = new Thread(task, "ratelimit-settle-" + name);
                thread.setDaemon(true);
                return thread;
            });
        }
        long round = ++rounds;
        backingOff = delayMillis > 0;
        retrier.schedule(() -> retryRound(round), delayMillis, TimeUnit.MILLISECONDS);
    }

    /** Retries one batch from the head of the queue, then schedules the next round. */
    private void retryRound(long round) {
        List<Pending> batch = new ArrayList<>(BATCH);
        List<Settlement> expired = new ArrayList<>();
        long now = nanoTime.getAsLong();
        synchronized (this) {
            if (round != rounds) {
                return; // superseded by a round scheduled when the store answered during its backoff
            }
            backingOff = false;
            while (batch.size() < BATCH && !pending.isEmpty()) {
                Pending next = pending.pollFirst();
                if (now - next.giveUpNanos() > 0) {
                    expired.add(next.settlement());
                } else {
                    batch.add(next);
                }
            }
            inFlight = batch.size();
        }
        if (!expired.isEmpty()) {
            giveUp(expired, "expired");
        }
        List<CompletableFuture<Void>> attempts = new ArrayList<>(batch.size());
        for (Pending entry : batch) {
            CompletableFuture<Void> attempt;
            try {
                attempt = store.settleAsync(entry.settlement()).toCompletableFuture();
            } catch (RuntimeException e) {
                attempt = CompletableFuture.failedFuture(e);
            }
            attempts.add(attempt);
        }
        List<Pending> failed = new ArrayList<>();
        Throwable cause = null;
        for (int i = 0; i < batch.size(); i++) {
            try {
                attempts.get(i).join();
                metrics.settleRetried();
            } catch (RuntimeException e) {
                failed.add(batch.get(i));
                cause = StoreGuard.unwrap(e);
            }
        }
        synchronized (this) {
            for (int i = failed.size() - 1; i >= 0; i--) {
                pending.addFirst(failed.get(i)); // back at the head, in their order
            }
            inFlight = 0;
            scheduled = false;
            if (failed.isEmpty()) {
                backoffMillis = FIRST_BACKOFF_MILLIS;
            }
            if (!pending.isEmpty()) {
                schedule(failed.isEmpty() ? 0 : backoffMillis);
            }
            if (!failed.isEmpty()) {
                backoffMillis = Math.min(LAST_BACKOFF_MILLIS, backoffMillis * 2);
            }
            notifyAll();
        }
        if (cause != null) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    "Rate limiter ''{0}'': {1} settlements still waiting for the store: {2}",
                    name,
                    failed.size(),
                    cause);
        }
    }

    private void giveUp(List<Settlement> settlements, String reason) {
        for (int i = 0; i < settlements.size(); i++) {
            metrics.settleFailure(reason);
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "Rate limiter ''{0}'': gave up {1} settlement(s) ({2}): the store did not take them in time;"
                        + " their estimates stay until their windows pass. First entry id: {3}",
                name,
                settlements.size(),
                reason,
                settlements.get(0).entryId());
    }

    @Override
    public synchronized String toString() {
        return "SettleQueue{pending=" + (pending.size() + inFlight) + "}";
    }
}
