package dev.ratelimit.core;

import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The windows of {@link dev.ratelimit.api.FailurePolicy#LOCAL} decided in this process while the
 * store cannot decide: each scope's window is an exact sliding log in memory whose limit is this
 * instance's share, the window's limit divided by the instances expected (rounded down), so that
 * that many instances together never admit more than the limit. A calendar window's log counts what
 * it recorded since its period's start on the wall clock and lets it all leave at the next period's
 * start, as the store does: a sliding log of its nominal length would be wrong both ways (a 25-hour
 * day would admit twice the share, a month's retries would point up to 31 days away).
 *
 * <p>A request is recorded in every one of its local windows or in none (all or nothing, under one
 * lock). Memory is bounded: at most {@link #MAX_LOGS} windows are kept, beyond which a new one
 * refuses (erring on the side of refusing); a window's log holds at most its share of entries and is
 * dropped once they have all left it.
 */
final class LocalShares {

    /** The most scope windows kept in memory at once. */
    static final int MAX_LOGS = 100_000;

    private final int instances;
    private final ConcurrentHashMap<String, Log> logs = new ConcurrentHashMap<>();

    LocalShares(int instances) {
        if (instances < 1) {
            throw new IllegalArgumentException("expectedInstances must be at least 1, was " + instances);
        }
        this.instances = instances;
    }

    /** One window to decide locally: its scope's key, the window, and the request's weight in it. */
    record Part(String key, Window window, long weight) {}

    /** The answer: admitted, or the window that refused and when a retry could first succeed. */
    record Outcome(@Nullable Window refused, Duration retryAfter) {

        boolean admitted() {
            return refused == null;
        }
    }

    /** This instance's share of a window's limit. */
    long share(Window window) {
        return window.limit() / instances;
    }

    /**
     * Decides the parts together: records the weights in every window when all have room, else none.
     *
     * @param now the time of sliding windows (it only measures how long entries are held)
     * @param epochNow the wall-clock time in epoch ms, whose calendar periods calendar windows count
     */
    synchronized Outcome reserve(List<Part> parts, long now, long epochNow) {
        Log[] found = new Log[parts.size()];
        for (int i = 0; i < parts.size(); i++) {
            Part part = parts.get(i);
            Log log = logs.get(part.key());
            if (log == null) {
                if (logs.size() >= MAX_LOGS) {
                    pruneAll(now, epochNow);
                }
                if (logs.size() >= MAX_LOGS) {
                    return new Outcome(part.window(), part.window().length());
                }
                log = new Log(part.window());
                logs.put(part.key(), log);
            }
            long time = log.calendar == null ? now : epochNow;
            log.trim(time);
            long share = share(part.window());
            if (part.weight() > share) {
                return new Outcome(part.window(), part.window().length()); // never fits this instance's share
            }
            if (log.used + part.weight() > share) {
                return new Outcome(
                        part.window(), Duration.ofMillis(log.retryAfter(time, log.used + part.weight() - share)));
            }
            found[i] = log;
        }
        for (int i = 0; i < parts.size(); i++) {
            if (parts.get(i).weight() > 0) {
                found[i].add(
                        found[i].calendar == null ? now : epochNow, parts.get(i).weight());
            }
        }
        return new Outcome(null, Duration.ZERO);
    }

    private void pruneAll(long now, long epochNow) {
        logs.values().removeIf(log -> {
            log.trim(log.calendar == null ? now : epochNow);
            return log.used == 0;
        });
    }

    /** Entries of one scope window: times (epoch ms for a calendar window) and weights, oldest first. */
    private static final class Log {
        private final Window window;
        private final long lengthMillis;
        private final Window.@Nullable Calendar calendar;
        private final ArrayDeque<long[]> entries = new ArrayDeque<>();
        private long used;

        Log(Window window) {
            this.window = window;
            this.lengthMillis = window.lengthMillis();
            this.calendar = window.calendar();
        }

        void trim(long now) {
            long cutoff = window.cutoffMillis(now);
            long[] oldest;
            while ((oldest = entries.peekFirst()) != null && oldest[0] <= cutoff) {
                entries.pollFirst();
                used -= oldest[1];
            }
        }

        void add(long now, long weight) {
            entries.addLast(new long[] {now, weight});
            used += weight;
        }

        /** The time until enough has left for {@code excess} more to fit. */
        long retryAfter(long now, long excess) {
            if (calendar != null) {
                return calendar.endMillis(now) - now; // everything the period holds leaves at its end
            }
            long freed = 0;
            for (long[] entry : entries) {
                freed += entry[1];
                if (freed >= excess) {
                    return Math.max(1, entry[0] + lengthMillis - now);
                }
            }
            return lengthMillis;
        }
    }
}
