package dev.ratelimit.testkit;

import com.example.store.ExampleStore;
import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * The example store of {@code docs/writing-a-store.md}, broken on purpose in one chosen way, to show
 * that the kit catches each kind of defect with the right rule. Each defect is made around the
 * correct store, through the port: by what it records, what it answers or when.
 */
final class DefectiveStore implements WindowStore {

    enum Defect {
        /** Records the request in the windows checked before the one that rejects. */
        CHARGES_SHORTER_WINDOWS_ON_REJECTION,
        /** Counts in fixed windows aligned to multiples of the shortest window's length. */
        FIXED_WINDOW,
        /** Counts and records in two steps, with a gap between them. */
        NOT_ATOMIC,
        /** Rounds the retry delay down to whole seconds. */
        ROUNDED_RETRY,
        /** Charges the user's scope when a shared one rejects. */
        CHARGES_USER_WHEN_SHARED_REJECTS,
        /** Reports the longer windows after the rejecting one, which it should leave alone, with their state. */
        REPORTS_LONGER_WINDOWS_ON_REJECTION,
        /** Settles token windows on commit but leaves the windows of every other unit at their estimate. */
        SETTLES_TOKENS_ONLY
    }

    private final Defect defect;
    private final WindowStore store = new ExampleStore();

    DefectiveStore(Defect defect) {
        this.defect = defect;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        return switch (defect) {
            case CHARGES_SHORTER_WINDOWS_ON_REJECTION ->
                chargingOnRefusal(request, refused -> refused.isTooLarge() ? 0 : refused.rejectedIndex());
            case CHARGES_USER_WHEN_SHARED_REJECTS -> {
                int userWindows = request.scopes().get(0).windows().size();
                yield chargingOnRefusal(request, refused -> refused.rejectedIndex() >= userWindows ? userWindows : 0);
            }
            case FIXED_WINDOW -> fixedWindow(request);
            case NOT_ATOMIC -> countThenRecord(request);
            case REPORTS_LONGER_WINDOWS_ON_REJECTION -> reportingEveryWindow(request);
            case SETTLES_TOKENS_ONLY -> store.evaluate(request);
            case ROUNDED_RETRY -> {
                Evaluation evaluation = store.evaluate(request);
                yield withRetry(evaluation, Math.max(1, evaluation.retryAfterMillis() / 1_000 * 1_000));
            }
        };
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        return store.peek(request);
    }

    @Override
    public void settle(Settlement settlement) {
        if (defect == Defect.SETTLES_TOKENS_ONLY && !settlement.isCancel()) {
            // a unit the actual amounts do not name keeps its estimate: every unit but tokens
            store.settle(new Settlement(
                    settlement.scopes(),
                    settlement.entryId(),
                    settlement.reservedAtMillis(),
                    settlement.estimate(),
                    Amounts.tokens(settlement.actualTokens()),
                    settlement.nowMillis(),
                    settlement.lease()));
            return;
        }
        store.settle(settlement);
    }

    /** Evaluates a request and, when refused, records it anyway in as many of its first windows as {@code charged} says. */
    private Evaluation chargingOnRefusal(StoreRequest request, ToIntFunction<Evaluation> charged) {
        Evaluation evaluation = store.evaluate(request);
        int count = evaluation.isAllowed() ? 0 : charged.applyAsInt(evaluation);
        if (count > 0) {
            store.evaluate(unlimited(request, count, evaluation.nowMillis()));
        }
        return evaluation;
    }

    /** Evaluates a request and, when refused, fills in the windows left alone with what a peek reads there. */
    private Evaluation reportingEveryWindow(StoreRequest request) {
        Evaluation evaluation = store.evaluate(request);
        if (evaluation.isAllowed()) {
            return evaluation;
        }
        Evaluation peeked = store.peek(request);
        long[] used = new long[evaluation.size()];
        long[] reset = new long[evaluation.size()];
        for (int i = 0; i < used.length; i++) {
            used[i] = evaluation.evaluated(i) ? evaluation.used(i) : peeked.used(i);
            reset[i] = evaluation.evaluated(i) ? evaluation.resetAfterMillis(i) : peeked.resetAfterMillis(i);
        }
        int index = evaluation.rejectedIndex();
        return evaluation.isTooLarge()
                ? Evaluation.tooLarge(evaluation.nowMillis(), index, used, reset)
                : Evaluation.rejected(evaluation.nowMillis(), index, evaluation.retryAfterMillis(), used, reset);
    }

    /** Evaluates at the start of the fixed window the time falls in; requests on the store's time pass through. */
    private Evaluation fixedWindow(StoreRequest request) {
        if (!request.hasTime()) {
            return store.evaluate(request);
        }
        long now = request.nowMillis();
        long start = now - Math.floorMod(now, request.windows().get(0).lengthMillis());
        Evaluation evaluation =
                store.evaluate(new StoreRequest(request.scopes(), request.amounts(), request.entryId(), start, null));
        return withRetry(evaluation, Math.max(1, evaluation.retryAfterMillis() - (now - start)));
    }

    /** Counts (reserves and gives back), waits, then records whatever the windows hold by then. */
    private Evaluation countThenRecord(StoreRequest request) {
        Evaluation counted = store.evaluate(request);
        if (!counted.isAllowed()) {
            return counted;
        }
        long now = counted.nowMillis();
        store.settle(new Settlement(request.scopes(), request.entryId(), now, request.amounts(), null, now, null));
        try {
            Thread.sleep(5); // the gap between counting and recording that atomicity closes
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return store.evaluate(unlimited(request, request.windows().size(), now));
    }

    /**
     * The first {@code count} windows of a request with no limit: evaluating it records there whatever
     * they hold. Logs are named by scope and window shape, not by limit, so these are the same logs.
     */
    private static StoreRequest unlimited(StoreRequest request, int count, long nowMillis) {
        List<StoreRequest.Scope> scopes = new ArrayList<>();
        int left = count;
        for (StoreRequest.Scope scope : request.scopes()) {
            List<Window> windows = scope.windows().stream()
                    .limit(Math.max(0, left))
                    .map(w -> new Window(
                            w.name(),
                            Long.MAX_VALUE,
                            w.length(),
                            w.unit(),
                            w.precision(),
                            null,
                            w.calendar(),
                            w.mode()))
                    .toList();
            left -= scope.windows().size();
            if (!windows.isEmpty()) {
                scopes.add(new StoreRequest.Scope(scope.subject(), windows, scope.shared()));
            }
        }
        return new StoreRequest(scopes, request.amounts(), request.entryId(), nowMillis, null);
    }

    /** The same evaluation with another retry delay, when it is a rejection. */
    private static Evaluation withRetry(Evaluation evaluation, long retryAfterMillis) {
        if (evaluation.isAllowed() || evaluation.isTooLarge()) {
            return evaluation;
        }
        long[] used = new long[evaluation.size()];
        long[] reset = new long[evaluation.size()];
        for (int i = 0; i < used.length; i++) {
            used[i] = evaluation.used(i);
            reset[i] = evaluation.resetAfterMillis(i);
        }
        return Evaluation.rejected(evaluation.nowMillis(), evaluation.rejectedIndex(), retryAfterMillis, used, reset);
    }
}
