package dev.ratelimit.inmemory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A {@link WindowStore} that keeps an exact sliding-window log per user in memory: the embedded
 * default for demos, unit tests and single-node services.
 *
 * <p>It honours the same contract as the Redis stores: each evaluation is atomic per user (it runs
 * inside the cache's per-key compute), a rejection records nothing, and a user's log is evicted
 * once it has been idle for its longest window plus one second. Counts are per JVM: use a Redis
 * store when several processes share a budget.
 *
 * <pre>{@code
 * RateLimiter limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
 * }</pre>
 */
public final class InMemoryWindowStore implements WindowStore {

    private final Cache<String, UserLog> logs;
    private final Clock clock;

    private InMemoryWindowStore(Clock clock) {
        this.clock = clock;
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
        Evaluation[] result = new Evaluation[1];
        logs.asMap().compute(request.subject(), (subject, log) -> {
            UserLog current = log == null ? new UserLog() : log;
            result[0] = current.evaluate(request.windows(), request.permits(), now);
            return current;
        });
        return result[0];
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

        Evaluation evaluate(List<Window> requested, int permits, long now) {
            int count = requested.size();
            WindowLog[] selected = new WindowLog[count];
            for (int i = 0; i < count; i++) {
                Window window = requested.get(i);
                long length = window.lengthMillis();
                WindowLog log = logFor(length);
                log.trim(now - length);
                if (log.sum() + permits > window.limit()) {
                    lastCheckRecorded = false;
                    long retry = log.isEmpty() ? length : log.oldest() + length - now;
                    return Evaluation.rejected(i, log.sum(), retry);
                }
                selected[i] = log;
            }
            long[] used = new long[count];
            long[] reset = new long[count];
            for (int i = 0; i < count; i++) {
                long length = requested.get(i).lengthMillis();
                selected[i].add(now, permits);
                used[i] = selected[i].sum();
                reset[i] = selected[i].oldest() + length - now;
                longestMillis = Math.max(longestMillis, length);
            }
            lastCheckRecorded = true;
            return Evaluation.allowed(used, reset);
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
