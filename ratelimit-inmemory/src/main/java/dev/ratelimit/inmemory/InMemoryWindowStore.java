package dev.ratelimit.inmemory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A {@link WindowStore} that keeps an exact sliding-window log per user in memory: the embedded
 * default for demos, unit tests and single-node services.
 *
 * <p>It honours the same contract as the Redis stores: each evaluation is atomic (a user's check
 * runs inside the cache's per-key compute under a lock striped by user; a check of several scopes
 * holds all their stripes), a rejection records nothing, and a user's log is evicted
 * once it has been idle for its longest window plus one second. Counts are per JVM: use a Redis
 * store when several processes share a budget.
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
 * }</pre>
 */
public final class InMemoryWindowStore implements WindowStore {

    private static final int STRIPES = 256;

    private final Cache<String, UserLog> logs;
    private final Clock clock;
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];

    private InMemoryWindowStore(Clock clock) {
        this.clock = clock;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
        // Idle logs expire on the store's own clock, the same one that timestamps its entries.
        this.logs = Caffeine.newBuilder()
                .expireAfter(new IdleExpiry())
                .ticker(() -> TimeUnit.MILLISECONDS.toNanos(clock.millis()))
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
        long now = request.hasTime() ? request.nowMillis() : clock.millis();
        List<StoreRequest.Scope> scopes = request.scopes();
        if (scopes.size() == 1) {
            StoreRequest.Scope scope = scopes.get(0);
            ReentrantLock stripe = stripeOf(scope.subject());
            stripe.lock();
            try {
                Evaluation[] result = new Evaluation[1];
                logs.asMap().compute(scope.subject(), (subject, log) -> {
                    UserLog current = log == null ? new UserLog() : log;
                    Evaluation rejected = current.check(scope.windows(), request.permits(), now, 0);
                    if (rejected != null) {
                        result[0] = rejected;
                    } else {
                        int n = scope.windows().size();
                        long[] used = new long[n];
                        long[] reset = new long[n];
                        current.record(scope.windows(), request.permits(), now, used, reset, 0);
                        result[0] = Evaluation.allowed(used, reset);
                    }
                    return current;
                });
                return result[0];
            } finally {
                stripe.unlock();
            }
        }
        return evaluateScopes(scopes, request.permits(), now);
    }

    /**
     * Evaluates several scopes atomically: their stripes are locked in a fixed order (no deadlock),
     * every scope is checked, and only then is the request recorded in all of them.
     */
    private Evaluation evaluateScopes(List<StoreRequest.Scope> scopes, int permits, long now) {
        TreeSet<Integer> order = new TreeSet<>();
        for (StoreRequest.Scope scope : scopes) {
            order.add(stripeIndex(scope.subject()));
        }
        List<ReentrantLock> held = new ArrayList<>(order.size());
        try {
            for (int index : order) {
                ReentrantLock stripe = stripes[index];
                stripe.lock();
                held.add(stripe);
            }
            int offset = 0;
            for (StoreRequest.Scope scope : scopes) {
                Evaluation[] rejected = new Evaluation[1];
                int first = offset;
                logs.asMap().compute(scope.subject(), (subject, log) -> {
                    UserLog current = log == null ? new UserLog() : log;
                    rejected[0] = current.check(scope.windows(), permits, now, first);
                    return current;
                });
                if (rejected[0] != null) {
                    return rejected[0];
                }
                offset += scope.windows().size();
            }
            long[] used = new long[offset];
            long[] reset = new long[offset];
            offset = 0;
            for (StoreRequest.Scope scope : scopes) {
                int first = offset;
                logs.asMap().compute(scope.subject(), (subject, log) -> {
                    UserLog current = log == null ? new UserLog() : log;
                    current.record(scope.windows(), permits, now, used, reset, first);
                    return current;
                });
                offset += scope.windows().size();
            }
            return Evaluation.allowed(used, reset);
        } finally {
            for (ReentrantLock stripe : held) {
                stripe.unlock();
            }
        }
    }

    private ReentrantLock stripeOf(String subject) {
        return stripes[stripeIndex(subject)];
    }

    private static int stripeIndex(String subject) {
        int hash = subject.hashCode();
        return (hash ^ (hash >>> 16)) & (STRIPES - 1);
    }

    /**
     * Tells whether the store holds any state for {@code userId}; an idle user's log is dropped
     * after its longest window plus one second of real time.
     *
     * @param userId the user
     * @return {@code true} while the user's log is retained
     */
    public boolean holdsStateFor(String userId) {
        return logs.getIfPresent(Objects.requireNonNull(userId, "userId must not be null")) != null;
    }

    /**
     * Returns the approximate number of users whose logs are retained.
     *
     * @return the number of retained user logs
     */
    public long estimatedUserCount() {
        logs.cleanUp();
        return logs.estimatedSize();
    }

    @Override
    public String toString() {
        return "InMemoryWindowStore{users~" + logs.estimatedSize() + "}";
    }

    /** Keeps a user's log for its longest window plus one second after the last recorded request. */
    private static final class IdleExpiry implements Expiry<String, UserLog> {

        @Override
        public long expireAfterCreate(String key, UserLog value, long currentTime) {
            return value.retentionNanos();
        }

        @Override
        public long expireAfterUpdate(String key, UserLog value, long currentTime, long currentDuration) {
            // A rejection writes nothing, so it must not extend the log's life either.
            return value.lastCheckRecorded() ? value.retentionNanos() : currentDuration;
        }

        @Override
        public long expireAfterRead(String key, UserLog value, long currentTime, long currentDuration) {
            return currentDuration;
        }
    }

    /** The logs of one user, one per window length; guarded by the cache's per-key compute. */
    static final class UserLog {

        private long[] lengths = new long[0];
        private WindowLog[] windows = new WindowLog[0];
        private long longestMillis;
        private boolean lastCheckRecorded;

        /**
         * Trims and checks every window; returns the rejection of the first full one (indices
         * shifted by {@code offset}), or {@code null} when all have room. Writes nothing.
         */
        @Nullable
        Evaluation check(List<Window> requested, int permits, long now, int offset) {
            lastCheckRecorded = false;
            for (int i = 0; i < requested.size(); i++) {
                Window window = requested.get(i);
                long length = window.lengthMillis();
                WindowLog log = logFor(length);
                log.trim(now - length);
                if (log.sum() + permits > window.limit()) {
                    long excess = log.sum() + permits - window.limit();
                    long retry =
                            log.isEmpty() || permits > window.limit() ? length : log.timeFreeing(excess) + length - now;
                    return Evaluation.rejected(offset + i, log.sum(), retry);
                }
            }
            return null;
        }

        /** Records the request in every window; call only after {@link #check} found room. */
        void record(List<Window> requested, int permits, long now, long[] used, long[] reset, int offset) {
            for (int i = 0; i < requested.size(); i++) {
                long length = requested.get(i).lengthMillis();
                WindowLog log = logFor(length);
                log.add(now, permits);
                used[offset + i] = log.sum();
                reset[offset + i] = log.oldest() + length - now;
                longestMillis = Math.max(longestMillis, length);
            }
            lastCheckRecorded = true;
        }

        boolean lastCheckRecorded() {
            return lastCheckRecorded;
        }

        long retentionNanos() {
            return TimeUnit.MILLISECONDS.toNanos(longestMillis + 1_000);
        }

        private WindowLog logFor(long lengthMillis) {
            for (int i = 0; i < lengths.length; i++) {
                if (lengths[i] == lengthMillis) {
                    return windows[i];
                }
            }
            int n = lengths.length;
            lengths = java.util.Arrays.copyOf(lengths, n + 1);
            windows = java.util.Arrays.copyOf(windows, n + 1);
            lengths[n] = lengthMillis;
            windows[n] = new WindowLog();
            return windows[n];
        }
    }

    /** A time-ordered ring buffer of (timestamp, permits) entries with their running sum. */
    static final class WindowLog {

        private long[] times = new long[4];
        private int[] weights = new int[4];
        private int head;
        private int size;
        private long sum;

        long sum() {
            return sum;
        }

        boolean isEmpty() {
            return size == 0;
        }

        long oldest() {
            return times[head];
        }

        /** Returns the time of the entry whose leaving frees at least {@code units} permits. */
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

        /** Drops every entry at or before {@code cutoff}: it has left the window. */
        void trim(long cutoff) {
            while (size > 0 && times[head] <= cutoff) {
                sum -= weights[head];
                head = (head + 1) % times.length;
                size--;
            }
            if (size == 0) {
                head = 0;
                if (times.length > 64) { // let a burst's buffer go once it has drained
                    times = new long[4];
                    weights = new int[4];
                }
            }
        }

        void add(long time, int permits) {
            if (size == times.length) {
                grow();
            }
            // Keep entries ordered even when callers' clocks interleave out of order.
            int position = size;
            while (position > 0 && times[index(position - 1)] > time) {
                times[index(position)] = times[index(position - 1)];
                weights[index(position)] = weights[index(position - 1)];
                position--;
            }
            times[index(position)] = time;
            weights[index(position)] = permits;
            size++;
            sum += permits;
        }

        private int index(int offset) {
            return (head + offset) % times.length;
        }

        private void grow() {
            long[] newTimes = new long[times.length * 2];
            int[] newWeights = new int[times.length * 2];
            for (int i = 0; i < size; i++) {
                newTimes[i] = times[index(i)];
                newWeights[i] = weights[index(i)];
            }
            times = newTimes;
            weights = newWeights;
            head = 0;
        }
    }
}
