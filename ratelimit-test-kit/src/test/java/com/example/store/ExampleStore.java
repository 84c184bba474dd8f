package com.example.store;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Exact sliding-window logs in one map, one lock for every call: a store written from the docs alone. */
public final class ExampleStore implements WindowStore {

    /** Names a log: the scope (a user's and a shared budget's never mix) and the window's shape, not its limit. */
    private record Key(
            String subject,
            boolean shared,
            Duration length,
            Window.Unit unit,
            Duration precision,
            boolean calendar,
            boolean shadow) {}

    private record Entry(long time, String id, long weight) {}

    private final Map<Key, List<Entry>> logs = new HashMap<>();
    private final Map<String, Long> settled = new HashMap<>(); // entry id -> when the proof of its settlement lapses
    private final Clock clock = Clock.systemUTC();

    @Override
    public synchronized Evaluation evaluate(StoreRequest request) {
        long now = request.hasTime() ? request.nowMillis() : clock.millis();
        List<Window> windows = request.windows();
        List<List<Entry>> windowLogs = logs(request, now);
        long[] weights = windows.stream().mapToLong(request::weightIn).toArray();
        Evaluation refused = refusal(request, windowLogs, weights, now);
        if (refused != null) {
            return refused;
        }
        for (int i = 0; i < windows.size(); i++) {
            if (weights[i] > 0) {
                windowLogs.get(i).add(new Entry(at(windows.get(i), now), request.entryId(), weights[i]));
            }
        }
        return Evaluation.allowed(now, used(windowLogs), resetAfter(windowLogs, windows, now));
    }

    /** Takes a budget lease as a request of its weights, its entry stamped at the lease's end. */
    @Override
    public synchronized Evaluation takeLease(BudgetLease lease, long nowMillis) {
        long now = nowMillis == StoreRequest.STORE_TIME ? clock.millis() : nowMillis;
        StoreRequest request = new StoreRequest(List.of(lease.budget()), Amounts.none(), lease.entryId(), now, null);
        List<Window> windows = request.windows();
        List<List<Entry>> windowLogs = logs(request, now);
        long[] weights = windows.stream().mapToLong(lease::weightIn).toArray();
        Evaluation refused = refusal(request, windowLogs, weights, now);
        if (refused != null) {
            return refused;
        }
        for (int i = 0; i < windows.size(); i++) {
            if (weights[i] > 0) {
                windowLogs.get(i).add(new Entry(lease.stampMillis(now), lease.entryId(), weights[i]));
            }
        }
        return Evaluation.allowed(now, used(windowLogs), resetAfter(windowLogs, windows, now));
    }

    /** Keeps what was used of a lease's entry and gives back the rest, once; in doubt, gives it all back. */
    @Override
    public synchronized void returnLease(
            BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        long now = nowMillis == StoreRequest.STORE_TIME ? clock.millis() : nowMillis;
        settled.values().removeIf(lapses -> lapses <= now);
        if (settled.putIfAbsent(lease.entryId(), now + Settlement.REPEAT_GUARD.toMillis()) != null) {
            return; // returned before
        }
        boolean inDoubt = stampMillis == Settlement.IN_DOUBT;
        for (Window window : lease.budget().windows()) {
            long kept = inDoubt ? 0 : window.countsRequests() ? requestsUsed : used.get(window.unit());
            List<Entry> log = log(lease.budget(), window, now);
            log.replaceAll(entry -> entry.id().equals(lease.entryId()) && (inDoubt || entry.time() == stampMillis)
                    ? new Entry(entry.time(), entry.id(), Math.min(entry.weight(), kept))
                    : entry);
            log.removeIf(entry -> entry.weight() == 0);
        }
    }

    /** The answer when a window cannot take the weights, too large or rejected; {@code null} when all can. */
    private static @Nullable Evaluation refusal(
            StoreRequest request, List<List<Entry>> windowLogs, long[] weights, long now) {
        List<Window> windows = request.windows();
        long[] used = used(windowLogs);
        long[] reset = resetAfter(windowLogs, windows, now);
        for (int i = 0; i < windows.size(); i++) {
            Window window = windows.get(i);
            if (weights[i] > window.limit()) {
                leaveAloneAfter(request, i, used, reset);
                return Evaluation.tooLarge(now, i, used, reset);
            }
            long excess = used[i] + Math.max(weights[i], 1) - window.limit();
            if (excess > 0) {
                leaveAloneAfter(request, i, used, reset);
                long leaves = window.leavesAtMillis(leavesAfterFreeing(windowLogs.get(i), excess));
                return Evaluation.rejected(now, i, Math.max(leaves - now, 1), used, reset);
            }
        }
        return null;
    }

    @Override
    public synchronized Evaluation peek(StoreRequest request) {
        long now = request.hasTime() ? request.nowMillis() : clock.millis();
        List<List<Entry>> windowLogs = logs(request, now);
        return Evaluation.allowed(now, used(windowLogs), resetAfter(windowLogs, request.windows(), now));
    }

    @Override
    public synchronized void settle(Settlement settlement) {
        long now = settlement.hasTime() ? settlement.nowMillis() : clock.millis();
        settled.values().removeIf(lapses -> lapses <= now);
        long guard = settlement.repeatGuardMillis();
        if (guard > 0 && settled.putIfAbsent(settlement.entryId(), now + guard) != null) {
            return; // applied before: a retry whose reply was lost, or a commit after a cancel
        }
        for (StoreRequest.Scope scope : settlement.scopes()) {
            for (Window window : scope.windows()) {
                List<Entry> log = log(scope, window, now);
                long estimate = settlement.estimateIn(window);
                long target = settlement.targetIn(window);
                if (target < estimate) { // a refund or a cancel: only where the entry is still in the window
                    log.replaceAll(entry -> entry.id().equals(settlement.entryId())
                            ? new Entry(entry.time(), entry.id(), entry.weight() - (estimate - target))
                            : entry);
                    log.removeIf(entry -> entry.weight() == 0);
                } else if (target > estimate && !window.isCalendar()) { // an overrun, charged now, never rejected
                    log.add(new Entry(at(window, now), settlement.entryId(), target - estimate));
                } else if (target > estimate && settlement.reservedAtMillis() > window.cutoffMillis(now)) {
                    // a calendar window charges it in the reservation's period, while that period lasts
                    log.add(new Entry(settlement.reservedAtMillis(), settlement.entryId(), target - estimate));
                }
            }
        }
    }

    /** Reports the later, longer windows a rejection by window {@code rejected} leaves alone as not evaluated. */
    private static void leaveAloneAfter(StoreRequest request, int rejected, long[] used, long[] reset) {
        for (int i = rejected + 1; i < used.length; i++) {
            if (request.skipsAfter(rejected, i)) {
                used[i] = Evaluation.NOT_EVALUATED;
                reset[i] = Evaluation.NOT_EVALUATED;
            }
        }
    }

    /** Returns the logs of a request's windows, in request order, without the entries that have left them. */
    private List<List<Entry>> logs(StoreRequest request, long now) {
        List<List<Entry>> windowLogs = new ArrayList<>();
        for (int i = 0; i < request.windows().size(); i++) {
            windowLogs.add(log(request.scopeOf(i), request.windows().get(i), now));
        }
        return windowLogs;
    }

    /** Returns a window's log without the entries that have left it. */
    private List<Entry> log(StoreRequest.Scope scope, Window window, long now) {
        Key key = new Key(
                scope.subject(),
                scope.shared(),
                window.length(),
                window.unit(),
                window.precision(),
                window.isCalendar(),
                window.inShadow());
        List<Entry> log = logs.computeIfAbsent(key, k -> new ArrayList<>());
        log.removeIf(entry -> entry.time() <= window.cutoffMillis(now));
        return log;
    }

    private static long[] used(List<List<Entry>> windowLogs) {
        return windowLogs.stream()
                .mapToLong(log -> log.stream().mapToLong(Entry::weight).sum())
                .toArray();
    }

    private static long[] resetAfter(List<List<Entry>> windowLogs, List<Window> windows, long now) {
        long[] reset = new long[windows.size()];
        for (int i = 0; i < reset.length; i++) {
            Window window = windows.get(i);
            reset[i] = windowLogs.get(i).stream()
                    .mapToLong(entry -> window.leavesAtMillis(entry.time()) - now)
                    .min()
                    .orElse(0);
        }
        return reset;
    }

    /** Returns the time of the entry at which the running sum of weights, oldest first, reaches {@code excess}. */
    private static long leavesAfterFreeing(List<Entry> log, long excess) {
        List<Entry> oldestFirst = new ArrayList<>(log); // overruns and racing clocks add entries out of order
        oldestFirst.sort(Comparator.comparingLong(Entry::time));
        long freed = 0;
        for (Entry entry : oldestFirst) {
            freed += entry.weight();
            if (freed >= excess) {
                return entry.time();
            }
        }
        throw new IllegalStateException("a window holds less than its excess");
    }

    /** Returns the time an entry counts at: the end of its step in a precision window. */
    private static long at(Window window, long time) {
        long step = window.precisionMillis();
        return step == 0 ? time : (Math.floorDiv(time, step) + 1) * step;
    }
}
