package dev.ratelimit.testkit;

import com.example.store.ExampleStore;
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
 * The example store with leases on top, under one lock, for the kit's self-test of section Q:
 * correct, or broken on purpose.
 */
final class LeasingStore implements WindowStore {

    enum Defect {
        NONE,
        /** A release frees a slot by count, not by name: releasing twice frees another holder's. */
        RELEASES_BY_COUNT,
        /** Leases never pass: a holder that dies keeps its slot. */
        NEVER_EXPIRES
    }

    private final Defect defect;
    private final WindowStore windows = new ExampleStore();
    private final Map<String, Map<String, Long>> leases = new HashMap<>(); // scope -> entry id -> end
    private final Map<String, Integer> released = new HashMap<>(); // scope -> releases by count

    LeasingStore(Defect defect) {
        this.defect = defect;
    }

    @Override
    public synchronized Evaluation evaluate(StoreRequest request) {
        StoreRequest.Lease lease = request.lease();
        if (lease == null) {
            return windows.evaluate(request);
        }
        long now = request.hasTime() ? request.nowMillis() : System.currentTimeMillis();
        if (held(lease, now) >= lease.cap()) {
            Evaluation state = windows.peek(request);
            if (fits(request, state)) {
                return Evaluation.leaseRefused(now, used(state), resets(state));
            }
        }
        Evaluation evaluation = windows.evaluate(request);
        if (evaluation.isAllowed()) {
            leases.computeIfAbsent(key(lease), k -> new HashMap<>()).put(request.entryId(), now + lease.ttlMillis());
        }
        return evaluation;
    }

    @Override
    public synchronized Evaluation peek(StoreRequest request) {
        return windows.peek(request);
    }

    @Override
    public synchronized void settle(Settlement settlement) {
        windows.settle(settlement);
        StoreRequest.Lease lease = settlement.lease();
        if (lease == null) {
            return;
        }
        Map<String, Long> scope = leases.computeIfAbsent(key(lease), k -> new HashMap<>());
        if (defect == Defect.RELEASES_BY_COUNT) {
            if (!scope.isEmpty()) {
                scope.remove(new ArrayList<>(scope.keySet()).get(0));
            }
            released.merge(key(lease), 1, Integer::sum);
        } else {
            scope.remove(settlement.entryId());
        }
    }

    @Override
    public synchronized boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        held(lease, nowMillis);
        Map<String, Long> scope = leases.get(key(lease));
        if (scope == null || !scope.containsKey(entryId)) {
            return false;
        }
        scope.put(entryId, nowMillis + lease.ttlMillis());
        return true;
    }

    @Override
    public synchronized long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        return held(lease, nowMillis);
    }

    private int held(StoreRequest.Lease lease, long now) {
        Map<String, Long> scope = leases.computeIfAbsent(key(lease), k -> new HashMap<>());
        if (defect != Defect.NEVER_EXPIRES) {
            scope.values().removeIf(end -> end <= now);
        }
        return scope.size();
    }

    private static boolean fits(StoreRequest request, Evaluation state) {
        List<Window> all = request.windows();
        for (int i = 0; i < all.size(); i++) {
            long weight = request.weightIn(all.get(i));
            if (weight > all.get(i).limit()
                    || state.used(i) + Math.max(1, weight) > all.get(i).limit()) {
                return false;
            }
        }
        return true;
    }

    private static long[] used(Evaluation state) {
        long[] used = new long[state.size()];
        for (int i = 0; i < used.length; i++) {
            used[i] = state.used(i);
        }
        return used;
    }

    private static long[] resets(Evaluation state) {
        long[] resets = new long[state.size()];
        for (int i = 0; i < resets.length; i++) {
            resets[i] = state.resetAfterMillis(i);
        }
        return resets;
    }

    private static String key(StoreRequest.Lease lease) {
        return (lease.shared() ? "shared:" : "user:") + lease.subject();
    }
}
