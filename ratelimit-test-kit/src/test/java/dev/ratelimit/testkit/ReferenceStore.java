package dev.ratelimit.testkit;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A deliberately plain store for proving the kit: correct by default, and broken in one chosen way
 * to show that the kit catches each kind of defect with the right rule.
 */
class ReferenceStore implements WindowStore {

    enum Defect {
        NONE,
        /** Records the request in the windows checked before the one that rejects. */
        CHARGES_SHORTER_WINDOWS_ON_REJECTION,
        /** Counts in fixed windows aligned to multiples of the length. */
        FIXED_WINDOW,
        /** Counts and records without holding a lock between the two. */
        NOT_ATOMIC,
        /** Rounds the retry delay down to whole seconds. */
        ROUNDED_RETRY,
        /** Charges the user's scope before looking at the shared ones, and keeps it when they reject. */
        CHARGES_USER_WHEN_SHARED_REJECTS
    }

    /** One recorded entry; its weight changes when a reservation settles below its estimate. */
    private static final class Entry {
        final long time;
        final String id;
        long weight;

        Entry(long time, String id, long weight) {
            this.time = time;
            this.id = id;
            this.weight = weight;
        }
    }

    private final Defect defect;
    private final Map<String, List<Entry>> logs = new HashMap<>();

    ReferenceStore(Defect defect) {
        this.defect = defect;
    }

    @Override
    public boolean atomicAcrossScopes() {
        return true;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        long now = request.hasTime() ? request.nowMillis() : System.currentTimeMillis();
        if (defect == Defect.NOT_ATOMIC) {
            synchronized (this) {
                Evaluation refused = check(request, now, 0, request.windows().size());
                if (refused != null) {
                    return refused;
                }
            }
            try {
                Thread.sleep(5); // the gap between counting and recording that atomicity closes
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            synchronized (this) {
                return record(request, now, 0, request.windows().size());
            }
        }
        synchronized (this) {
            int n = request.windows().size();
            if (defect == Defect.CHARGES_USER_WHEN_SHARED_REJECTS
                    && request.scopes().size() > 1) {
                int userWindows = request.scopes().get(0).windows().size();
                Evaluation refused = check(request, now, 0, userWindows);
                if (refused != null) {
                    return refused;
                }
                record(request, now, 0, userWindows);
                refused = check(request, now, userWindows, n);
                return refused != null ? refused : record(request, now, userWindows, n);
            }
            Evaluation refused = check(request, now, 0, n);
            return refused != null ? refused : record(request, now, 0, n);
        }
    }

    @Override
    public synchronized void settle(Settlement settlement) {
        for (StoreRequest.Scope scope : settlement.scopes()) {
            for (Window window : scope.windows()) {
                List<Entry> log = log(scope, window);
                long estimate = settlement.estimateIn(window);
                long target = settlement.targetIn(window);
                if (target < estimate) {
                    for (Entry entry : log) {
                        if (entry.id.equals(settlement.entryId())
                                && entry.time == at(window, settlement.reservedAtMillis())) {
                            entry.weight -= Math.min(entry.weight, estimate - target);
                        }
                    }
                } else if (target > estimate) {
                    log.add(new Entry(
                            at(window, settlement.nowMillis()), settlement.entryId() + "+", target - estimate));
                }
            }
        }
    }

    /** Trims and checks windows {@code from} to {@code upTo}; the refusal of the first that cannot take the request. */
    private Evaluation check(StoreRequest request, long now, int from, int upTo) {
        List<Window> windows = request.windows();
        long[] used = new long[windows.size()];
        long[] reset = new long[windows.size()];
        state(request, now, used, reset);
        for (int i = from; i < upTo; i++) {
            Window window = windows.get(i);
            long weight = request.weightIn(window);
            if (weight > window.limit()) {
                return Evaluation.tooLarge(now, i, used, reset);
            }
            long excess = used[i] + Math.max(1, weight) - window.limit();
            if (excess > 0) {
                if (defect == Defect.CHARGES_SHORTER_WINDOWS_ON_REJECTION) {
                    record(request, now, 0, i);
                }
                return Evaluation.rejected(now, i, retry(log(request, i), window, now, excess), used, reset);
            }
        }
        return null;
    }

    private Evaluation record(StoreRequest request, long now, int from, int to) {
        List<Window> windows = request.windows();
        for (int i = from; i < to; i++) {
            long weight = request.weightIn(windows.get(i));
            if (weight > 0) {
                log(request, i).add(new Entry(at(windows.get(i), now), request.entryId(), weight));
            }
        }
        long[] used = new long[windows.size()];
        long[] reset = new long[windows.size()];
        state(request, now, used, reset);
        return Evaluation.allowed(now, used, reset);
    }

    private void state(StoreRequest request, long now, long[] used, long[] reset) {
        List<Window> windows = request.windows();
        for (int i = 0; i < windows.size(); i++) {
            Window window = windows.get(i);
            List<Entry> log = log(request, i);
            trim(log, window, now);
            long oldest = Long.MAX_VALUE;
            for (Entry entry : log) {
                used[i] += entry.weight;
                if (entry.weight > 0) {
                    oldest = Math.min(oldest, entry.time);
                }
            }
            reset[i] = used[i] == 0 ? 0 : Math.max(0, oldest + window.lengthMillis() - now);
        }
    }

    private long retry(List<Entry> log, Window window, long now, long excess) {
        if (defect == Defect.FIXED_WINDOW) {
            long length = window.lengthMillis();
            return (now / length + 1) * length - now;
        }
        List<Entry> oldestFirst = new ArrayList<>(log);
        oldestFirst.sort((a, b) -> Long.compare(a.time, b.time));
        long freed = 0;
        long leaves = now + window.lengthMillis();
        for (Entry entry : oldestFirst) {
            freed += entry.weight;
            if (freed >= excess) {
                leaves = entry.time + window.lengthMillis();
                break;
            }
        }
        long retry = Math.max(1, leaves - now);
        return defect == Defect.ROUNDED_RETRY ? Math.max(1, retry / 1_000 * 1_000) : retry;
    }

    private void trim(List<Entry> log, Window window, long now) {
        if (defect == Defect.FIXED_WINDOW) {
            long start = now / window.lengthMillis() * window.lengthMillis();
            log.removeIf(entry -> entry.time < start);
            return;
        }
        log.removeIf(entry -> entry.time <= now - window.lengthMillis());
    }

    /** The time an entry counts at: the end of its step in a precision window. */
    private static long at(Window window, long time) {
        long step = window.precisionMillis();
        return step == 0 ? time : (Math.floorDiv(time, step) + 1) * step;
    }

    private List<Entry> log(StoreRequest request, int windowIndex) {
        return log(request.scopeOf(windowIndex), request.windows().get(windowIndex));
    }

    private List<Entry> log(StoreRequest.Scope scope, Window window) {
        String key = (scope.shared() ? "shared:" : "user:")
                + scope.subject()
                + '\u0000'
                + window.lengthSeconds()
                + window.unit()
                + window.precisionMillis();
        return logs.computeIfAbsent(key, k -> new ArrayList<>());
    }
}
