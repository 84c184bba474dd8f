package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Remembers rejections by request windows so that a client retrying before its retry time is
 * rejected locally, with no store call.
 *
 * <p>Exact because of how a sliding-window log behaves: after a rejection whose retry time is
 * {@code r}, no entry of the rejecting request window leaves it before {@code r} has passed, and
 * other limiters only add entries, so the same request (or any request with the same scopes) is
 * rejected by the store until then. The deadline is counted from the moment the store call
 * started, so it never outlasts the store's own answer. Two things give room back sooner: a
 * cancelled reservation (a refund) and nothing else for request windows. Cancels through this
 * limiter drop the affected entries at once; a cancel on another limiter instance can leave this
 * one rejecting a request that would now fit, for at most the cached retry time. Rejections by
 * windows of an amount unit (tokens, spend) are never cached: every commit below the estimate refunds
 * some, on any instance.
 * A cached rejection reports the rejecting window's usage alone, counted down: the other windows the
 * store reported may have moved since, and an unknown window is left out of a decision's usage.
 *
 * <p>Bounded: at most {@code maximumSize} subjects; when full, expired entries are dropped and a new
 * rejection that still finds no room is simply not cached (the next request asks the store).
 */
final class RejectionCache {

    private final int maximumSize;
    private final LongSupplier ticker;
    private final ConcurrentMap<String, List<Entry>> bySubject = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Long> sharedCancels = new ConcurrentHashMap<>();
    /** Bumped by every cancel through this limiter: a store answer older than a cancel is not cached. */
    private final AtomicLong cancels = new AtomicLong();

    /**
     * Creates a cache.
     *
     * @param maximumSize the most subjects held
     * @param ticker milliseconds on a monotonic scale (an injected clock's, or {@code nanoTime})
     */
    RejectionCache(int maximumSize, LongSupplier ticker) {
        this.maximumSize = maximumSize;
        this.ticker = ticker;
    }

    /** The time the cache counts deadlines in. */
    long tick() {
        return ticker.getAsLong();
    }

    /** The cancel count to pass back to {@link #remember} with the store's answer. */
    long cancels() {
        return cancels.get();
    }

    int size() {
        return bySubject.size();
    }

    /**
     * Returns the cached rejection for this request with its retry time counted down, or {@code
     * null} when the store must be asked.
     */
    @Nullable
    Decision lookup(StoreRequest request) {
        List<Entry> entries = bySubject.get(request.subject());
        if (entries == null) {
            return null;
        }
        long now = tick();
        for (Entry entry : entries) {
            if (entry.scopes.equals(request.scopes()) && now < entry.deadline && entry.valid(sharedCancels)) {
                return entry.countedDown(now);
            }
        }
        return null;
    }

    /**
     * Caches a rejection by a request window, unless a cancel went through this limiter while the
     * store call was under way (its answer may predate the refund).
     *
     * @param start {@link #tick()} before the store call
     * @param cancelsAtStart {@link #cancels()} before the store call
     */
    void remember(StoreRequest request, Decision decision, long start, long cancelsAtStart) {
        if (decision.allowed()
                || decision.degraded()
                || decision.tooLarge()
                || !decision.window().countsRequests()
                || decision.retryAfter().isZero()) {
            return;
        }
        String budget = decision.budget();
        long sharedAtStart = budget == null ? 0 : sharedCancels.getOrDefault(budget, 0L);
        if (cancels.get() != cancelsAtStart) {
            return;
        }
        Entry entry = new Entry(
                request.scopes(), start, start + decision.retryAfter().toMillis(), decision, budget, sharedAtStart);
        String subject = request.subject();
        if (!bySubject.containsKey(subject) && bySubject.size() >= maximumSize && !makeRoom()) {
            return;
        }
        bySubject.compute(subject, (key, current) -> {
            List<Entry> next = new ArrayList<>(current == null ? 1 : current.size() + 1);
            long now = tick();
            if (current != null) {
                for (Entry kept : current) {
                    if (now < kept.deadline && !kept.scopes.equals(entry.scopes)) {
                        next.add(kept);
                    }
                }
            }
            next.add(entry);
            return List.copyOf(next);
        });
        if (cancels.get() != cancelsAtStart) {
            // a cancel raced with this insert: it may have run between the check above and the put
            bySubject.remove(subject);
        }
    }

    /** Forgets what a cancel of these scopes may have made room in. */
    void cancelled(List<StoreRequest.Scope> scopes) {
        cancels.incrementAndGet();
        for (StoreRequest.Scope scope : scopes) {
            if (scope.shared()) {
                sharedCancels.merge(scope.subject(), 1L, Long::sum);
            } else {
                bySubject.remove(scope.subject());
            }
        }
    }

    private boolean makeRoom() {
        long now = tick();
        bySubject.entrySet().removeIf(e -> e.getValue().stream().allMatch(entry -> now >= entry.deadline));
        return bySubject.size() < maximumSize;
    }

    private record Entry(
            List<StoreRequest.Scope> scopes,
            long start,
            long deadline,
            Decision decision,
            @Nullable String budget,
            long sharedCancelsAtStart) {

        boolean valid(ConcurrentMap<String, Long> sharedCancels) {
            return budget == null || sharedCancels.getOrDefault(budget, 0L) == sharedCancelsAtStart;
        }

        Decision countedDown(long now) {
            Duration retry = Duration.ofMillis(deadline - now);
            Duration elapsed = Duration.ofMillis(now - start);
            // Only the rejecting window is still known: it is full until the deadline, so nobody adds to
            // it and nothing leaves it. The other windows the store reported may have moved since.
            List<Decision.Usage> usage = new ArrayList<>(1);
            for (Decision.Usage u : decision.usage()) {
                if (u.window().equals(decision.window()) && Objects.equals(u.budget(), decision.budget())) {
                    Duration reset = u.resetAfter().minus(elapsed);
                    usage.add(new Decision.Usage(
                            u.window(), u.budget(), u.used(), reset.isNegative() ? Duration.ZERO : reset));
                }
            }
            return new Decision(
                    false,
                    decision.limit(),
                    0,
                    retry,
                    decision.window(),
                    retry,
                    false,
                    decision.budget(),
                    false,
                    usage);
        }
    }
}
