package dev.ratelimit.testkit;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.util.ArrayDeque;
import java.util.Deque;
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
        ROUNDED_RETRY
    }

    private final Defect defect;
    private final Map<String, Deque<Long>> logs = new HashMap<>();

    ReferenceStore(Defect defect) {
        this.defect = defect;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        long now = request.hasTime() ? request.nowMillis() : System.currentTimeMillis();
        if (defect == Defect.NOT_ATOMIC) {
            return racy(request, now);
        }
        synchronized (this) {
            List<Window> windows = request.windows();
            for (int i = 0; i < windows.size(); i++) {
                Window window = windows.get(i);
                Deque<Long> log = log(request.subjectOf(i), window);
                trim(log, window, now);
                if (log.size() + request.permits() > window.limit()) {
                    if (defect == Defect.CHARGES_SHORTER_WINDOWS_ON_REJECTION) {
                        for (int j = 0; j < i; j++) {
                            log(request.subjectOf(j), windows.get(j)).addLast(now);
                        }
                    }
                    long retry = retry(log, window, now, request.permits());
                    return Evaluation.rejected(i, log.size(), retry);
                }
            }
            return record(request, now);
        }
    }

    private Evaluation racy(StoreRequest request, long now) {
        List<Window> windows = request.windows();
        for (int i = 0; i < windows.size(); i++) {
            Window window = windows.get(i);
            synchronized (this) {
                Deque<Long> log = log(request.subjectOf(i), window);
                trim(log, window, now);
                if (log.size() + request.permits() > window.limit()) {
                    return Evaluation.rejected(i, log.size(), retry(log, window, now, request.permits()));
                }
            }
        }
        try {
            Thread.sleep(5); // the gap between counting and recording that atomicity closes
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            return record(request, now);
        }
    }

    private Evaluation record(StoreRequest request, long now) {
        List<Window> windows = request.windows();
        long[] used = new long[windows.size()];
        long[] reset = new long[windows.size()];
        for (int i = 0; i < windows.size(); i++) {
            Deque<Long> log = log(request.subjectOf(i), windows.get(i));
            for (int p = 0; p < request.permits(); p++) {
                log.addLast(now);
            }
            used[i] = log.size();
            reset[i] = log.peekFirst() + windows.get(i).lengthMillis() - now;
        }
        return Evaluation.allowed(used, reset);
    }

    private long retry(Deque<Long> log, Window window, long now, int permits) {
        if (defect == Defect.FIXED_WINDOW) {
            long length = window.lengthMillis();
            return (now / length + 1) * length - now;
        }
        if (log.isEmpty() || permits > window.limit()) {
            return window.lengthMillis();
        }
        // room returns when the (count + permits - limit)-th oldest entry leaves
        long excess = log.size() + permits - window.limit();
        long freeing = log.stream().skip(excess - 1).findFirst().orElseThrow();
        long retry = freeing + window.lengthMillis() - now;
        return defect == Defect.ROUNDED_RETRY ? retry / 1_000 * 1_000 : retry;
    }

    private void trim(Deque<Long> log, Window window, long now) {
        if (defect == Defect.FIXED_WINDOW) {
            long start = now / window.lengthMillis() * window.lengthMillis();
            while (!log.isEmpty() && log.peekFirst() < start) {
                log.removeFirst();
            }
            return;
        }
        while (!log.isEmpty() && log.peekFirst() <= now - window.lengthMillis()) {
            log.removeFirst();
        }
    }

    private Deque<Long> log(String subject, Window window) {
        return logs.computeIfAbsent(subject + '\u0000' + window.lengthSeconds(), key -> new ArrayDeque<>());
    }
}
