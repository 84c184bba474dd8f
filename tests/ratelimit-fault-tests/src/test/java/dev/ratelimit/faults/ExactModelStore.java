package dev.ratelimit.faults;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * The exact log of CONFORMANCE.md's semantics, written as plainly as possible: a list of entries
 * per scope and window, nothing else. An entry of a precision window is recorded at the end of its
 * step, {@code (floor(t / step) + 1) * step}; entries live while {@code t > now - length}. Single
 * threaded; the differential test's reference.
 */
final class ExactModelStore implements WindowStore {

    /** One entry: its time, weight and entry id ({@code +} appended for an overrun). */
    private static final class Entry {
        final long time;
        long weight;
        final String id;

        Entry(long time, long weight, String id) {
            this.time = time;
            this.weight = weight;
            this.id = id;
        }
    }

    private final Map<String, List<Entry>> logs = new HashMap<>();

    private List<Entry> log(StoreRequest.Scope scope, Window window, long now) {
        String key = (scope.shared() ? "shared:" : "user:") + scope.subject() + "|" + window.lengthMillis() + "|"
                + window.unit() + "|" + window.precisionMillis();
        List<Entry> entries = logs.computeIfAbsent(key, k -> new ArrayList<>());
        entries.removeIf(e -> e.time <= now - window.lengthMillis() || e.weight <= 0);
        entries.sort(Comparator.comparingLong(e -> e.time));
        return entries;
    }

    private static long recordedAt(Window window, long t) {
        long step = window.precisionMillis();
        return step == 0 ? t : (Math.floorDiv(t, step) + 1) * step;
    }

    private static long used(List<Entry> entries) {
        return entries.stream().mapToLong(e -> e.weight).sum();
    }

    private static long reset(Window window, List<Entry> entries, long now) {
        return entries.isEmpty() ? 0 : Math.max(0, entries.get(0).time + window.lengthMillis() - now);
    }

    /** A rejection leaves the later, longer windows unevaluated: their state is unknown. */
    private static void unknownAfter(StoreRequest request, int rejected, long[] used, long[] reset) {
        for (int i = rejected + 1; i < used.length; i++) {
            if (request.skipsAfter(rejected, i)) {
                used[i] = Evaluation.NOT_EVALUATED;
                reset[i] = Evaluation.NOT_EVALUATED;
            }
        }
    }

    /** The first window that cannot take its weight decides: too large, or rejected; else {@code null}. */
    private static @Nullable Evaluation refusal(
            StoreRequest request,
            List<List<Entry>> logs,
            ToLongFunction<Window> weightIn,
            long[] used,
            long[] reset,
            long now) {
        List<Window> windows = request.windows();
        for (int i = 0; i < windows.size(); i++) {
            Window window = windows.get(i);
            long weight = weightIn.applyAsLong(window);
            if (weight > window.limit()) {
                unknownAfter(request, i, used, reset);
                return Evaluation.tooLarge(now, i, used, reset);
            }
            long need = Math.max(1, weight);
            if (used[i] + need > window.limit()) {
                unknownAfter(request, i, used, reset);
                long excess = used[i] + need - window.limit();
                long freed = 0;
                long leaves = now + window.lengthMillis();
                for (Entry entry : logs.get(i)) {
                    freed += entry.weight;
                    if (freed >= excess) {
                        leaves = entry.time + window.lengthMillis();
                        break;
                    }
                }
                return Evaluation.rejected(now, i, Math.max(1, leaves - now), used, reset);
            }
        }
        return null;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        long now = request.nowMillis();
        List<Window> windows = request.windows();
        int n = windows.size();
        List<List<Entry>> logs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            logs.add(log(request.scopeOf(i), windows.get(i), now));
        }
        long[] used = new long[n];
        long[] reset = new long[n];
        for (int i = 0; i < n; i++) {
            used[i] = used(logs.get(i));
            reset[i] = reset(windows.get(i), logs.get(i), now);
        }
        Evaluation refused = refusal(request, logs, request::weightIn, used, reset, now);
        if (refused != null) {
            return refused;
        }
        for (int i = 0; i < n; i++) {
            Window window = windows.get(i);
            long weight = request.weightIn(window);
            List<Entry> entries = logs.get(i);
            if (weight > 0 && entries.stream().noneMatch(e -> e.id.equals(request.entryId()))) {
                entries.add(new Entry(recordedAt(window, now), weight, request.entryId()));
                entries.sort(Comparator.comparingLong(e -> e.time));
            }
            used[i] = used(entries);
            reset[i] = reset(window, entries, now);
        }
        return Evaluation.allowed(now, used, reset);
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        long now = request.nowMillis();
        List<Window> windows = request.windows();
        long[] used = new long[windows.size()];
        long[] reset = new long[windows.size()];
        for (int i = 0; i < windows.size(); i++) {
            List<Entry> entries = log(request.scopeOf(i), windows.get(i), now);
            used[i] = used(entries);
            reset[i] = reset(windows.get(i), entries, now);
        }
        return Evaluation.allowed(now, used, reset);
    }

    @Override
    public void settle(Settlement settlement) {
        long now = settlement.nowMillis();
        boolean cancel = settlement.actualTokens() == Settlement.CANCEL;
        for (StoreRequest.Scope scope : settlement.scopes()) {
            for (Window window : scope.windows()) {
                long estimate = window.isTokens() ? settlement.estimatedTokens() : 1;
                long target = cancel ? 0 : window.isTokens() ? settlement.actualTokens() : 1;
                if (target == estimate) {
                    continue;
                }
                List<Entry> entries = log(scope, window, now);
                long reservedAt = recordedAt(window, settlement.reservedAtMillis());
                if (target < estimate) {
                    // a refund applies where the reservation is still counted: its own entry, or in a
                    // precision window its step, whose entries count as one
                    long refund = estimate - target;
                    for (Entry entry : entries) {
                        boolean own = entry.id.equals(settlement.entryId());
                        if (refund > 0 && (own || (window.precisionMillis() > 0 && entry.time == reservedAt))) {
                            long taken = Math.min(entry.weight, refund);
                            entry.weight -= taken;
                            refund -= taken;
                        }
                    }
                } else {
                    entries.add(new Entry(recordedAt(window, now), target - estimate, settlement.entryId() + "+"));
                }
                entries.removeIf(e -> e.weight <= 0);
            }
        }
    }

    private final Set<String> returned = new HashSet<>();

    /** A budget lease: one entry per window, stamped at the lease's end, all or nothing. */
    @Override
    public Evaluation takeLease(BudgetLease lease, long nowMillis) {
        long now = nowMillis;
        StoreRequest.Scope budget = lease.budget();
        List<Window> windows = budget.windows();
        int n = windows.size();
        long[] used = new long[n];
        long[] reset = new long[n];
        List<List<Entry>> logs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            logs.add(log(budget, windows.get(i), now));
            used[i] = used(logs.get(i));
            reset[i] = reset(windows.get(i), logs.get(i), now);
        }
        StoreRequest asRequest = new StoreRequest(List.of(budget), Amounts.none(), lease.entryId(), now, null);
        Evaluation refused = refusal(asRequest, logs, lease::weightIn, used, reset, now);
        if (refused != null) {
            return refused;
        }
        for (int i = 0; i < n; i++) {
            long weight = lease.weightIn(windows.get(i));
            if (weight > 0) {
                logs.get(i).add(new Entry(lease.stampMillis(now), weight, lease.entryId()));
                logs.get(i).sort(Comparator.comparingLong(e -> e.time));
            }
            used[i] = used(logs.get(i));
            reset[i] = reset(windows.get(i), logs.get(i), now);
        }
        return Evaluation.allowed(now, used, reset);
    }

    /** Keeps what was used of a lease's entry, gives back the rest; once. */
    @Override
    public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        if (!returned.add(lease.entryId())) {
            return;
        }
        for (Window window : lease.budget().windows()) {
            long weight = lease.weightIn(window);
            long kept = Math.min(weight, window.countsRequests() ? requestsUsed : used.get(window.unit()));
            for (Entry entry : log(lease.budget(), window, nowMillis)) {
                if (entry.id.equals(lease.entryId()) && entry.time == stampMillis) {
                    entry.weight -= weight - kept;
                }
            }
        }
    }
}
