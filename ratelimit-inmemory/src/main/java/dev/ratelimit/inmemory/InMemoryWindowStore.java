package dev.ratelimit.inmemory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * A {@link WindowStore} that keeps exact sliding-window logs in memory: the embedded default for
 * demos, unit tests and single-node services.
 *
 * <p>It honours the same contract as the Redis stores: each evaluation is atomic (it runs under a
 * lock striped by scope; a request of several scopes holds all their stripes), a rejection records
 * nothing (and reports the longer windows after the rejecting one as not evaluated, as the Redis
 * stores do), precision windows keep one entry per step, and a scope's state is dropped one second
 * after its last entry has left its window. Time is the request's when it carries one (an
 * injected clock), otherwise the store's clock, and idle state is evicted on that same time: once
 * requests carry their time, the latest time a request carried. Counts are per JVM: use a Redis
 * store when several processes share a budget.
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
 * }</pre>
 */
public final class InMemoryWindowStore implements WindowStore {

    private static final int STRIPES = 256;

    private final Cache<ScopeKey, ScopeLog> logs;
    private final Clock clock;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    // The latest time requests carried: once they carry time, eviction follows it, not the clock.
    private final AtomicLong requestTime = new AtomicLong(Long.MIN_VALUE);

    private InMemoryWindowStore(Clock clock) {
        this.clock = clock;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
        this.logs = Caffeine.newBuilder()
                .expireAfter(new IdleExpiry())
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(currentMillis()))
                .build();
    }

    /**
     * Creates a store that takes time from the system clock when a request carries none.
     *
     * @return a new, empty store
     */
    public static InMemoryWindowStore create() {
        return new InMemoryWindowStore(Clock.systemUTC());
    }

    /**
     * Creates a store that takes time from {@code clock} when a request carries none.
     *
     * @param clock the store's own clock
     * @return a new, empty store
     */
    public static InMemoryWindowStore create(Clock clock) {
        return new InMemoryWindowStore(Objects.requireNonNull(clock, "clock must not be null"));
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        long now = timeOf(request.hasTime(), request.nowMillis());
        List<ReentrantLock> held = lock(request.scopes());
        try {
            Loaded loaded = load(request, now);
            List<Window> windows = request.windows();
            Evaluation refused = refusal(request, loaded, request::weightIn, now);
            if (refused != null) {
                return refused;
            }
            StoreRequest.Lease lease = request.lease();
            ScopeLog leaseLog = null;
            if (lease != null) {
                leaseLog = loaded.scopes[scopeIndex(request, lease)];
                if (leaseLog.leasesAt(now) >= lease.cap()) {
                    return Evaluation.leaseRefused(now, loaded.used, loaded.reset);
                }
            }
            for (int i = 0; i < windows.size(); i++) {
                Window window = windows.get(i);
                long weight = request.weightIn(window);
                if (weight > 0) {
                    loaded.windows[i].add(now, weight, request.entryId());
                    loaded.owners[i].recorded(window.leavesAtMillis(loaded.windows[i].lastTime()));
                }
                loaded.used[i] = loaded.windows[i].sum();
                loaded.reset[i] = resetAfter(window, loaded.windows[i], now);
            }
            if (lease != null && leaseLog != null) {
                leaseLog.hold(request.entryId(), now + lease.ttlMillis());
            }
            for (int s = 0; s < request.scopes().size(); s++) {
                keep(request.scopes().get(s), loaded.scopes[s]);
            }
            return Evaluation.allowed(now, loaded.used, loaded.reset);
        } finally {
            unlock(held);
        }
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        long now = timeOf(request.hasTime(), request.nowMillis());
        List<ReentrantLock> held = lock(request.scopes());
        try {
            Loaded loaded = load(request, now); // a scope never seen is loaded empty and not kept
            return Evaluation.allowed(now, loaded.used, loaded.reset);
        } finally {
            unlock(held);
        }
    }

    /**
     * The answer when a window cannot take its weight, too large or rejected (nothing recorded, the
     * windows a rejection leaves alone reported as not evaluated); {@code null} when every window can.
     */
    private static @Nullable Evaluation refusal(
            StoreRequest request, Loaded loaded, ToLongFunction<Window> weightIn, long now) {
        List<Window> windows = request.windows();
        for (int i = 0; i < windows.size(); i++) {
            Window window = windows.get(i);
            long weight = weightIn.applyAsLong(window);
            if (weight > window.limit()) {
                loaded.leaveAloneAfter(request, i);
                return Evaluation.tooLarge(now, i, loaded.used, loaded.reset);
            }
            long excess = loaded.used[i] + Math.max(1, weight) - window.limit();
            if (excess > 0) {
                loaded.leaveAloneAfter(request, i);
                long leaves = window.leavesAtMillis(loaded.windows[i].timeFreeing(excess));
                return Evaluation.rejected(now, i, Math.max(1, leaves - now), loaded.used, loaded.reset);
            }
        }
        return null;
    }

    /** Every window's log of a request, trimmed to {@code now}, with its sum and reset time. */
    private Loaded load(StoreRequest request, long now) {
        List<StoreRequest.Scope> scopes = request.scopes();
        Loaded loaded = new Loaded(request.windows().size(), scopes.size());
        int index = 0;
        for (int s = 0; s < scopes.size(); s++) {
            StoreRequest.Scope scope = scopes.get(s);
            ScopeLog log = logOf(scope);
            loaded.scopes[s] = log;
            for (Window window : scope.windows()) {
                WindowLog windowLog = log.windowFor(window);
                windowLog.trim(window.cutoffMillis(now));
                loaded.windows[index] = windowLog;
                loaded.owners[index] = log;
                loaded.used[index] = windowLog.sum();
                loaded.reset[index] = resetAfter(window, windowLog, now);
                index++;
            }
        }
        return loaded;
    }

    /** The logs a request touches, in request order, and their state. */
    private static final class Loaded {
        final WindowLog[] windows;
        final ScopeLog[] owners;
        final ScopeLog[] scopes;
        final long[] used;
        final long[] reset;

        Loaded(int windowCount, int scopeCount) {
            windows = new WindowLog[windowCount];
            owners = new ScopeLog[windowCount];
            scopes = new ScopeLog[scopeCount];
            used = new long[windowCount];
            reset = new long[windowCount];
        }

        /** Reports the windows a rejection by window {@code rejected} leaves alone as not evaluated. */
        void leaveAloneAfter(StoreRequest request, int rejected) {
            for (int i = rejected + 1; i < used.length; i++) {
                if (request.skipsAfter(rejected, i)) {
                    used[i] = Evaluation.NOT_EVALUATED;
                    reset[i] = Evaluation.NOT_EVALUATED;
                }
            }
        }
    }

    @Override
    public void settle(Settlement settlement) {
        Objects.requireNonNull(settlement, "settlement must not be null");
        long now = timeOf(settlement.hasTime(), settlement.nowMillis());
        List<ReentrantLock> held = lock(settlement.scopes());
        try {
            long guard = settlement.repeatGuardMillis();
            if (guard > 0) {
                // marked in the first scope, as the Redis stores do: a repeat changes nothing
                StoreRequest.Scope first = settlement.scopes().get(0);
                ScopeLog log = logOf(first);
                boolean repeat = !log.markSettled(settlement.entryId(), now, now + guard);
                keep(first, log);
                if (repeat) {
                    return;
                }
            }
            long reservedAt = settlement.isInDoubt() ? recordedAt(settlement) : settlement.reservedAtMillis();
            for (StoreRequest.Scope scope : settlement.scopes()) {
                ScopeLog log = logOf(scope);
                for (Window window : scope.windows()) {
                    if (reservedAt < 0) {
                        break; // a cancel in doubt whose entry no exact window holds: nothing to give back
                    }
                    long estimate = settlement.estimateIn(window);
                    long target = settlement.targetIn(window);
                    WindowLog windowLog = log.windowFor(window);
                    if (target < estimate) {
                        windowLog.reduce(reservedAt, settlement.entryId(), estimate - target);
                    } else if (target > estimate && !window.isCalendar()) {
                        windowLog.trim(window.cutoffMillis(now));
                        windowLog.add(now, target - estimate, settlement.entryId() + "+");
                        log.recorded(windowLog.lastTime() + window.lengthMillis());
                    } else if (target > estimate && reservedAt > window.cutoffMillis(now)) {
                        // a calendar window charges the overrun in the reservation's period, while it lasts
                        windowLog.trim(window.cutoffMillis(now));
                        windowLog.add(reservedAt, target - estimate, settlement.entryId() + "+");
                        log.recorded(window.leavesAtMillis(reservedAt));
                    }
                }
                StoreRequest.Lease lease = settlement.lease();
                if (lease != null && lease.isIn(scope)) {
                    log.release(settlement.entryId()); // a second release finds nothing to free
                }
                keep(scope, log);
            }
        } finally {
            unlock(held);
        }
    }

    @Override
    public Evaluation exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis) {
        BudgetLease.checkExchange(returned, stampMillis, taking);
        Objects.requireNonNull(used, "used must not be null");
        // the budget's lock held across both (it is reentrant): no other call sees the one without the other
        List<ReentrantLock> held = lock(List.of(taking.budget()));
        try {
            returnLease(returned, stampMillis, requestsUsed, used, nowMillis);
            return takeLease(taking, nowMillis);
        } finally {
            unlock(held);
        }
    }

    @Override
    public Evaluation takeLease(BudgetLease lease, long nowMillis) {
        Objects.requireNonNull(lease, "lease must not be null");
        long now = timeOf(nowMillis != StoreRequest.STORE_TIME, nowMillis);
        StoreRequest.Scope budget = lease.budget();
        // the budget's windows as a request of their own, for the checks evaluate makes
        StoreRequest request = new StoreRequest(List.of(budget), Amounts.none(), lease.entryId(), now, null);
        List<ReentrantLock> held = lock(request.scopes());
        try {
            Loaded loaded = load(request, now);
            List<Window> windows = budget.windows();
            Evaluation refused = refusal(request, loaded, lease::weightIn, now);
            if (refused != null) {
                return refused;
            }
            long stamp = lease.stampMillis(now);
            ScopeLog log = loaded.scopes[0];
            for (int i = 0; i < windows.size(); i++) {
                Window window = windows.get(i);
                long weight = lease.weightIn(window);
                if (weight > 0) {
                    loaded.windows[i].add(stamp, weight, lease.entryId());
                    log.recorded(window.leavesAtMillis(stamp));
                }
                loaded.used[i] = loaded.windows[i].sum();
                loaded.reset[i] = resetAfter(window, loaded.windows[i], now);
            }
            keep(budget, log);
            return Evaluation.allowed(now, loaded.used, loaded.reset);
        } finally {
            unlock(held);
        }
    }

    @Override
    public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        Objects.requireNonNull(lease, "lease must not be null");
        Objects.requireNonNull(used, "used must not be null");
        long now = timeOf(nowMillis != StoreRequest.STORE_TIME, nowMillis);
        StoreRequest.Scope budget = lease.budget();
        List<ReentrantLock> held = lock(List.of(budget));
        try {
            ScopeLog log = logOf(budget);
            long stamp = stampMillis;
            if (stamp == Settlement.IN_DOUBT) {
                // a taking that may not have run: only an entry the budget holds is given back, whole
                for (Window window : budget.windows()) {
                    if (lease.weightIn(window) > 0 && stamp < 0) {
                        stamp = log.windowFor(window).timeOf(lease.entryId());
                    }
                }
                if (stamp < 0) {
                    return;
                }
                requestsUsed = 0;
                used = Amounts.none();
            }
            long longest = 0;
            for (Window window : budget.windows()) {
                longest = Math.max(longest, window.lengthMillis());
            }
            // a lease is returned once, as the Redis stores mark it
            long mark = Math.min(longest + lease.durationMillis(), Settlement.REPEAT_GUARD.toMillis());
            if (!log.markSettled(lease.entryId(), now, now + mark)) {
                return;
            }
            for (Window window : budget.windows()) {
                long weight = lease.weightIn(window);
                long kept = Math.min(weight, window.countsRequests() ? requestsUsed : used.get(window.unit()));
                if (kept < weight) {
                    WindowLog windowLog = log.windowFor(window);
                    windowLog.trim(window.cutoffMillis(now));
                    windowLog.reduce(stamp, lease.entryId(), weight - Math.max(0, kept));
                }
            }
            keep(budget, log);
        } finally {
            unlock(held);
        }
    }

    /** Milliseconds until the oldest entry of {@code log} leaves {@code window}, 0 when it is empty. */
    private static long resetAfter(Window window, WindowLog log, long now) {
        Window.Calendar calendar = window.calendar();
        return calendar == null
                ? log.resetAfter(now, window.lengthMillis())
                : log.sum() == 0 ? 0 : calendar.endMillis(now) - now;
    }

    /**
     * The time an exact window of a cancel in doubt holds its entry at, or -1 when none does (the
     * reservation was never recorded, or has left every exact window).
     */
    private long recordedAt(Settlement settlement) {
        for (StoreRequest.Scope scope : settlement.scopes()) {
            ScopeLog log = logOf(scope);
            for (Window window : scope.windows()) {
                if (window.isExact() && settlement.estimateIn(window) > 0) {
                    long time = log.windowFor(window).timeOf(settlement.entryId());
                    if (time >= 0) {
                        return time;
                    }
                }
            }
        }
        return -1;
    }

    @Override
    public boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        Objects.requireNonNull(entryId, "entryId must not be null");
        return withLeaseScope(lease, nowMillis, (key, log, now) -> {
            if (log == null || !log.holds(entryId, now)) {
                return false;
            }
            log.hold(entryId, now + lease.ttlMillis());
            logs.put(key, log);
            return true;
        });
    }

    @Override
    public long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        return withLeaseScope(lease, nowMillis, (key, log, now) -> log == null ? 0L : log.leasesAt(now));
    }

    /** What one lease call does with its scope's log ({@code null} when there is none) at {@code now}. */
    @FunctionalInterface
    private interface LeaseWork<T> {
        T apply(ScopeKey key, @Nullable ScopeLog log, long now);
    }

    /** Runs {@code work} on the lease's scope under its stripe's lock. */
    private <T> T withLeaseScope(StoreRequest.Lease lease, long nowMillis, LeaseWork<T> work) {
        Objects.requireNonNull(lease, "lease must not be null");
        long now = timeOf(nowMillis != StoreRequest.STORE_TIME, nowMillis);
        ScopeKey key = new ScopeKey(lease.subject(), lease.shared());
        ReentrantLock stripe = stripes[stripeIndex(key)];
        stripe.lock();
        try {
            return work.apply(key, logs.getIfPresent(key), now);
        } finally {
            stripe.unlock();
        }
    }

    private static int scopeIndex(StoreRequest request, StoreRequest.Lease lease) {
        for (int s = 0; s < request.scopes().size(); s++) {
            if (lease.isIn(request.scopes().get(s))) {
                return s;
            }
        }
        throw new IllegalStateException("the request validates its lease's scope");
    }

    /**
     * Tells whether the store holds any state for {@code userId}: a user's state is dropped one
     * second after the last entry of its longest window has left it, on the store's time.
     *
     * @param userId the user
     * @return {@code true} while the user's logs are retained
     */
    boolean holdsStateFor(String userId) {
        return logs.getIfPresent(new ScopeKey(Objects.requireNonNull(userId, "userId must not be null"), false))
                != null;
    }

    @Override
    public String toString() {
        return "InMemoryWindowStore{scopes~" + logs.estimatedSize() + "}";
    }

    private long timeOf(boolean carried, long requested) {
        if (carried) {
            requestTime.accumulateAndGet(requested, Math::max);
            return requested;
        }
        return clock.millis();
    }

    private long currentMillis() {
        long carried = requestTime.get();
        return carried == Long.MIN_VALUE ? clock.millis() : carried;
    }

    private ScopeLog logOf(StoreRequest.Scope scope) {
        ScopeLog log = logs.getIfPresent(ScopeKey.of(scope));
        return log != null ? log : new ScopeLog();
    }

    /** (Re)inserts a scope's logs after a write, so the cache keeps them as long as their entries. */
    private void keep(StoreRequest.Scope scope, ScopeLog log) {
        if (log.keepUntilMillis() + 1_000 > currentMillis()) {
            logs.put(ScopeKey.of(scope), log);
        }
    }

    private List<ReentrantLock> lock(List<StoreRequest.Scope> scopes) {
        // Fixed order, so requests of several scopes never deadlock.
        TreeSet<Integer> order = new TreeSet<>();
        for (StoreRequest.Scope scope : scopes) {
            order.add(stripeIndex(ScopeKey.of(scope)));
        }
        List<ReentrantLock> held = new ArrayList<>(order.size());
        for (int index : order) {
            stripes[index].lock();
            held.add(stripes[index]);
        }
        return held;
    }

    private static void unlock(List<ReentrantLock> held) {
        for (ReentrantLock stripe : held) {
            stripe.unlock();
        }
    }

    private static int stripeIndex(ScopeKey key) {
        int hash = key.hashCode();
        return (hash ^ (hash >>> 16)) & (STRIPES - 1);
    }

    /** A user's and a shared budget's logs never mix, whatever their names. */
    private record ScopeKey(String subject, boolean shared) {
        static ScopeKey of(StoreRequest.Scope scope) {
            return new ScopeKey(scope.subject(), scope.shared());
        }
    }

    /** Keeps a scope's logs until one second after the last recorded entry leaves its window. */
    private final class IdleExpiry implements Expiry<ScopeKey, ScopeLog> {

        @Override
        public long expireAfterCreate(ScopeKey key, ScopeLog value, long currentTime) {
            return remaining(value, currentTime);
        }

        @Override
        public long expireAfterUpdate(ScopeKey key, ScopeLog value, long currentTime, long currentDuration) {
            return remaining(value, currentTime);
        }

        @Override
        public long expireAfterRead(ScopeKey key, ScopeLog value, long currentTime, long currentDuration) {
            return currentDuration;
        }

        private long remaining(ScopeLog value, long currentTime) {
            long millis = value.keepUntilMillis() + 1_000 - TimeUnit.NANOSECONDS.toMillis(currentTime);
            return TimeUnit.MILLISECONDS.toNanos(Math.max(0, millis));
        }
    }

    /** The logs of one scope, one per window length, unit, precision, calendar and mode; guarded by the stripe lock. */
    static final class ScopeLog {

        private final List<Window> shapes = new ArrayList<>(4);
        private final List<WindowLog> windows = new ArrayList<>(4);
        private long keepUntilMillis = Long.MIN_VALUE / 2;
        private final Map<String, Long> leases = new HashMap<>(); // entry id -> end of the lease
        // entry id -> when the mark of its settlement lapses, oldest marks first
        private final Map<String, Long> settled = new LinkedHashMap<>();

        /**
         * Marks a settlement applied until {@code until}; returns {@code false} when it was marked
         * already (a repeat). Marks that have lapsed at {@code now} are dropped from the oldest on.
         */
        boolean markSettled(String entryId, long now, long until) {
            Iterator<Long> marks = settled.values().iterator();
            while (marks.hasNext() && marks.next() <= now) {
                marks.remove();
            }
            Long mark = settled.get(entryId);
            if (mark != null && mark > now) {
                return false;
            }
            settled.put(entryId, until);
            recorded(until);
            return true;
        }

        /** Drops the leases whose time has passed at {@code now} and counts the others. */
        int leasesAt(long now) {
            leases.values().removeIf(end -> end <= now);
            return leases.size();
        }

        boolean holds(String entryId, long now) {
            Long end = leases.get(entryId);
            return end != null && end > now;
        }

        /** Holds (or renews) a lease until {@code end}; the scope's state is kept at least as long. */
        void hold(String entryId, long end) {
            leases.put(entryId, end);
            recorded(end);
        }

        void release(String entryId) {
            leases.remove(entryId);
        }

        WindowLog windowFor(Window window) {
            for (int i = 0; i < shapes.size(); i++) {
                Window shape = shapes.get(i);
                if (shape.length().equals(window.length())
                        && shape.unit().equals(window.unit())
                        && shape.precision().equals(window.precision())
                        && shape.isCalendar() == window.isCalendar()
                        && shape.inShadow() == window.inShadow()) {
                    return windows.get(i);
                }
            }
            WindowLog log = new WindowLog(window.precisionMillis());
            shapes.add(window);
            windows.add(log);
            return log;
        }

        /** Notes that an entry stays in its window until {@code leavesAtMillis}. */
        void recorded(long leavesAtMillis) {
            keepUntilMillis = Math.max(keepUntilMillis, leavesAtMillis);
        }

        long keepUntilMillis() {
            return keepUntilMillis;
        }
    }

    /**
     * A time-ordered ring buffer of (time, weight, entry id) entries with their running sum. In a
     * precision window an entry's time is the end of its step and the entries of one step are one.
     */
    static final class WindowLog {

        private final long step;
        private long[] times = new long[4];
        private long[] weights = new long[4];
        private @Nullable String[] ids = new String[4];
        private int head;
        private int size;
        private long sum;

        WindowLog(long stepMillis) {
            this.step = stepMillis;
        }

        long sum() {
            return sum;
        }

        long lastTime() {
            return times[index(size - 1)];
        }

        /** Milliseconds until the oldest counted entry leaves a window of this length, 0 when empty. */
        long resetAfter(long now, long lengthMillis) {
            return size == 0 ? 0 : Math.max(0, times[head] + lengthMillis - now);
        }

        /** Returns the time of the entry at which the running sum from the oldest reaches {@code units}. */
        long timeFreeing(long units) {
            long freed = 0;
            for (int i = 0; i < size; i++) {
                freed += weights[index(i)];
                if (freed >= units) {
                    return times[index(i)];
                }
            }
            return times[index(size - 1)];
        }

        /** Drops every entry at or before {@code cutoff} (it has left the window) and emptied ones at the head. */
        void trim(long cutoff) {
            while (size > 0 && (times[head] <= cutoff || weights[head] == 0)) {
                sum -= weights[head];
                ids[head] = null;
                head = (head + 1) % times.length;
                size--;
            }
            if (size == 0) {
                head = 0;
                if (times.length > 64) { // let a burst's buffer go once it has drained
                    times = new long[4];
                    weights = new long[4];
                    ids = new String[4];
                }
            }
        }

        void add(long time, long weight, String id) {
            long at = step == 0 ? time : (Math.floorDiv(time, step) + 1) * step;
            if (step > 0) {
                for (int i = size - 1; i >= 0 && times[index(i)] >= at; i--) {
                    if (times[index(i)] == at) {
                        weights[index(i)] += weight;
                        sum += weight;
                        return;
                    }
                }
            }
            if (size == times.length) {
                grow();
            }
            // Keep entries ordered even when callers' clocks interleave out of order.
            int position = size;
            while (position > 0 && times[index(position - 1)] > at) {
                move(position - 1, position);
                position--;
            }
            times[index(position)] = at;
            weights[index(position)] = weight;
            ids[index(position)] = step == 0 ? id : null;
            size++;
            sum += weight;
        }

        /** The time of the entry an exact window holds under {@code id}, or -1 when it holds none. */
        long timeOf(String id) {
            for (int i = size - 1; i >= 0; i--) {
                int slot = index(i);
                if (id.equals(ids[slot])) {
                    return times[slot];
                }
            }
            return -1;
        }

        /** Takes up to {@code amount} off the reservation's entry, if it is still in the window. */
        void reduce(long reservedAt, String id, long amount) {
            long at = step == 0 ? reservedAt : (Math.floorDiv(reservedAt, step) + 1) * step;
            for (int i = size - 1; i >= 0; i--) {
                int slot = index(i);
                if (times[slot] < at) {
                    return;
                }
                if (times[slot] == at && (step > 0 || id.equals(ids[slot]))) {
                    long taken = Math.min(amount, weights[slot]);
                    weights[slot] -= taken;
                    sum -= taken;
                    return;
                }
            }
        }

        private void move(int from, int to) {
            times[index(to)] = times[index(from)];
            weights[index(to)] = weights[index(from)];
            ids[index(to)] = ids[index(from)];
        }

        private int index(int offset) {
            return (head + offset) % times.length;
        }

        private void grow() {
            int capacity = times.length * 2;
            long[] newTimes = new long[capacity];
            long[] newWeights = new long[capacity];
            @Nullable String[] newIds = new String[capacity];
            for (int i = 0; i < size; i++) {
                newTimes[i] = times[index(i)];
                newWeights[i] = weights[index(i)];
                newIds[i] = ids[index(i)];
            }
            times = newTimes;
            weights = newWeights;
            ids = newIds;
            head = 0;
        }

        @Override
        public String toString() {
            return "WindowLog{sum=" + sum + ", entries=" + size + ", step=" + step + "}";
        }
    }
}
