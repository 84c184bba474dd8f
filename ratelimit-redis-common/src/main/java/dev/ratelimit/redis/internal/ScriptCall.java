package dev.ratelimit.redis.internal;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The keys and arguments of one run of the sliding-window script, and how to read its reply; see
 * the header of {@code sliding_window.lua} for their meaning.
 *
 * @param <T> what the reply is read into
 */
public final class ScriptCall<T> {

    private static final String RESERVE = "r";
    private static final String SETTLE = "s";
    private static final String PEEK = "p";
    private static final String RENEW = "l";
    private static final String COUNT = "c";
    private static final String EXCHANGE = "x";
    private static final Clock WALL_CLOCK = Clock.systemUTC();

    private final String[] keys;
    private final String[] args;
    private final Function<@Nullable Object, T> reader;

    private ScriptCall(String[] keys, String[] args, Function<@Nullable Object, T> reader) {
        this.keys = keys;
        this.args = args;
        this.reader = reader;
    }

    /**
     * Builds the reserve call of a request.
     *
     * @param request the request
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into an {@link Evaluation}
     * @throws UnsupportedOperationException if the request has several scopes and the layout is a
     *     cluster: one script may only touch keys of one hash slot
     */
    public static ScriptCall<Evaluation> reserve(StoreRequest request, KeySpace space) {
        return evaluation(RESERVE, request, space);
    }

    /**
     * Builds the peek call of a request: every window's state, nothing recorded.
     *
     * @param request the windows to look at
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into an allowed {@link Evaluation}
     * @throws UnsupportedOperationException if the request has several scopes and the layout is a
     *     cluster
     */
    public static ScriptCall<Evaluation> peek(StoreRequest request, KeySpace space) {
        return evaluation(PEEK, request, space);
    }

    private static ScriptCall<Evaluation> evaluation(String op, StoreRequest request, KeySpace space) {
        Objects.requireNonNull(request, "request must not be null");
        Objects.requireNonNull(space, "space must not be null");
        if (space.layout() == KeyLayout.CLUSTER && request.scopes().size() > 1) {
            throw new UnsupportedOperationException(
                    "Redis Cluster evaluates one scope per call: scopes lie in different hash slots");
        }
        int windowCount = request.windows().size();
        StoreRequest.Lease lease = op.equals(RESERVE) ? request.lease() : null;
        String[] head = {
            op,
            request.hasTime() ? Long.toString(request.nowMillis()) : "",
            request.entryId(),
            lease == null ? "" : Integer.toString(lease.cap()),
            lease == null ? "" : Long.toString(lease.ttlMillis())
        };
        return build(
                request.scopes(),
                null,
                lease,
                space,
                request.nowMillis(),
                head,
                window -> window.countsRequests() ? "" : Long.toString(request.weightIn(window)),
                null,
                reply -> ScriptReply.evaluation(reply, windowCount));
    }

    /**
     * Builds the calls that apply a settlement: one call, or one per scope in a cluster, where the
     * scopes lie in different hash slots (settling needs no atomicity across scopes).
     *
     * @param settlement the settlement
     * @param space the layout and prefix of the target deployment
     * @return the calls, whose replies read into {@code true}
     */
    public static List<ScriptCall<Boolean>> settle(Settlement settlement, KeySpace space) {
        Objects.requireNonNull(settlement, "settlement must not be null");
        Objects.requireNonNull(space, "space must not be null");
        String flag = settlement.isCancel() ? "1" : "0";
        String marked = flag + ':' + settlement.repeatGuardMillis();
        String[] head = {
            SETTLE,
            settlement.hasTime() ? Long.toString(settlement.nowMillis()) : "",
            settlement.entryId(),
            settlement.isInDoubt() ? "" : Long.toString(settlement.reservedAtMillis()),
            flag
        };
        Function<Window, String> estimate =
                window -> window.countsRequests() ? "" : Long.toString(settlement.estimateIn(window));
        Function<Window, String> target =
                window -> window.countsRequests() ? "" : Long.toString(settlement.targetIn(window));
        StoreRequest.Lease lease = settlement.lease();
        if (space.layout() != KeyLayout.CLUSTER || settlement.scopes().size() == 1) {
            return List.of(settleCall(
                    settlement.scopes(), lease, space, settlement.nowMillis(), head, marked, estimate, target));
        }
        List<ScriptCall<Boolean>> calls = new ArrayList<>();
        for (StoreRequest.Scope scope : settlement.scopes()) {
            // the lease is released with its own scope's windows: its set lies in their hash slot
            calls.add(settleCall(
                    List.of(scope),
                    lease != null && lease.isIn(scope) ? lease : null,
                    space,
                    settlement.nowMillis(),
                    head,
                    marked,
                    estimate,
                    target));
        }
        return calls;
    }

    /**
     * One settle call. A call that touches a window of an amount is marked in its first scope's
     * settled set, so that applying it again (a retry after a lost reply) changes nothing; one of
     * request windows alone is idempotent as it is and is not marked.
     */
    private static ScriptCall<Boolean> settleCall(
            List<StoreRequest.Scope> scopes,
            StoreRequest.@Nullable Lease lease,
            KeySpace space,
            long nowMillis,
            String[] head,
            String marked,
            Function<Window, String> estimate,
            Function<Window, String> target) {
        String mark = null;
        for (StoreRequest.Scope scope : scopes) {
            for (Window window : scope.windows()) {
                if (!window.countsRequests()) {
                    mark = space.settledKey(scopes.get(0));
                }
            }
        }
        if (mark == null) {
            return build(scopes, null, lease, space, nowMillis, head, estimate, target, ScriptReply::settled);
        }
        String[] markedHead = head.clone();
        markedHead[markedHead.length - 1] = marked;
        return build(scopes, mark, lease, space, nowMillis, markedHead, estimate, target, ScriptReply::settled);
    }

    /**
     * Builds the call that renews a lease still held.
     *
     * @param lease the lease
     * @param entryId the entry id of the request that took it
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into {@code true} when the lease was held and is renewed
     */
    public static ScriptCall<Boolean> renewLease(
            StoreRequest.Lease lease, String entryId, long nowMillis, KeySpace space) {
        String[] args = {RENEW, time(nowMillis), entryId, "", Long.toString(lease.ttlMillis())};
        return new ScriptCall<>(new String[] {space.leaseKey(lease)}, args, reply -> ScriptReply.count(reply) == 1);
    }

    /**
     * Builds the call that counts the leases a scope holds.
     *
     * @param lease the lease naming the scope
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into the count
     */
    public static ScriptCall<Long> leasesHeld(StoreRequest.Lease lease, long nowMillis, KeySpace space) {
        String[] args = {COUNT, time(nowMillis), "", "", ""};
        return new ScriptCall<>(new String[] {space.leaseKey(lease)}, args, ScriptReply::count);
    }

    /**
     * The precision argument of a window: its step in ms, or for a calendar window {@code
     * c<start>:<end>...}, starts of consecutive periods in the window's zone, which the script cannot
     * compute (it knows no time zones) and among which it counts the one that holds its {@code now}.
     * With the limiter's time that is the period holding it; on the server's time ({@link
     * StoreRequest#STORE_TIME}) the period holding this process's wall clock and its two neighbours,
     * so the server's {@code TIME} decides which one counts: exact while the clocks differ by less
     * than a period, about a day at the shortest.
     */
    private static String alignment(Window window, long nowMillis) {
        Window.Calendar calendar = window.calendar();
        if (calendar == null) {
            return Long.toString(window.precisionMillis());
        }
        if (nowMillis != StoreRequest.STORE_TIME) {
            return "c" + calendar.startMillis(nowMillis) + ":" + calendar.endMillis(nowMillis);
        }
        // not the decision's time (the server's is): it only names the periods the server chooses from
        long wall = WALL_CLOCK.millis();
        long start = calendar.startMillis(wall);
        long end = calendar.endMillis(wall);
        return "c" + calendar.startMillis(start - 1) + ":" + start + ":" + end + ":" + calendar.endMillis(end);
    }

    private static String time(long nowMillis) {
        return nowMillis == StoreRequest.STORE_TIME ? "" : Long.toString(nowMillis);
    }

    private static <T> ScriptCall<T> build(
            List<StoreRequest.Scope> scopes,
            @Nullable String settledKey,
            StoreRequest.@Nullable Lease lease,
            KeySpace space,
            long nowMillis,
            String[] head,
            Function<Window, String> amount,
            @Nullable Function<Window, String> settled,
            Function<@Nullable Object, T> reader) {
        // sized up front: a call is built for every request
        int windowCount = 0;
        int keyCount = (settledKey != null ? 1 : 0) + (lease != null ? 1 : 0);
        for (StoreRequest.Scope scope : scopes) {
            for (Window window : scope.windows()) {
                windowCount++;
                keyCount += KeySpace.hasSumKey(window) ? 2 : 1;
            }
        }
        String[] keys = new String[keyCount];
        String[] args = Arrays.copyOf(head, head.length + (settled == null ? 4 : 5) * windowCount);
        int k = 0;
        int a = head.length;
        for (StoreRequest.Scope scope : scopes) {
            for (Window window : scope.windows()) {
                keys[k++] = space.key(scope, window);
                if (KeySpace.hasSumKey(window)) {
                    keys[k++] = space.sumKey(scope, window);
                }
                args[a++] = Long.toString(window.lengthMillis());
                args[a++] = Long.toString(window.limit());
                args[a++] = amount.apply(window);
                args[a++] = alignment(window, nowMillis);
                if (settled != null) {
                    args[a++] = settled.apply(window);
                }
            }
        }
        if (settledKey != null) {
            keys[k++] = settledKey;
        }
        if (lease != null) {
            keys[k] = space.leaseKey(lease);
        }
        return new ScriptCall<>(keys, args, reader);
    }

    /**
     * Builds the call that takes a budget lease: a reserve of the budget's windows alone, each with
     * the lease's precision argument ({@code l<duration>}, and {@code :<requests>} in a request
     * window), so the script stamps the entry at the lease's end.
     *
     * @param lease the lease
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into an {@link Evaluation} of the budget's windows
     */
    public static ScriptCall<Evaluation> takeLease(BudgetLease lease, long nowMillis, KeySpace space) {
        Objects.requireNonNull(lease, "lease must not be null");
        Objects.requireNonNull(space, "space must not be null");
        String[] head = {RESERVE, time(nowMillis), lease.entryId(), "", ""};
        int windowCount = lease.budget().windows().size();
        return leaseCall(lease, space, head, List.of(), reply -> ScriptReply.evaluation(reply, windowCount));
    }

    /**
     * Builds the call that returns a budget lease: a commit of the lease's entry, at its stamp, to
     * what was used (at most the lease's weight in each window), marked in the budget's settled set
     * so that returning it again changes nothing. A stamp of {@link Settlement#IN_DOUBT} cancels a lease whose
     * taking may not have run, where an exact window holds it.
     *
     * @param lease the lease
     * @param stampMillis the lease's stamp, or {@link Settlement#IN_DOUBT}
     * @param requestsUsed the requests kept
     * @param used the amount of each other unit kept
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into {@code true}
     */
    public static ScriptCall<Boolean> returnLease(
            BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis, KeySpace space) {
        Objects.requireNonNull(lease, "lease must not be null");
        Objects.requireNonNull(used, "used must not be null");
        Objects.requireNonNull(space, "space must not be null");
        boolean inDoubt = stampMillis == Settlement.IN_DOUBT;
        String[] head = {
            SETTLE,
            time(nowMillis),
            lease.entryId(),
            inDoubt ? "" : Long.toString(stampMillis),
            (inDoubt ? "1:" : "0:") + returnMark(lease)
        };
        return leaseCall(lease, space, head, List.of(kept(lease, requestsUsed, used)), ScriptReply::settled);
    }

    /**
     * Builds the call that returns one budget lease and takes the next on the same budget, in one run
     * of the script: the return as {@link #returnLease} makes it (marked, so that it applies once),
     * then the take as {@link #takeLease} makes it.
     *
     * @param returned the lease returned
     * @param stampMillis its stamp
     * @param requestsUsed the requests it keeps
     * @param used the amount of each other unit it keeps
     * @param taking the lease taken
     * @param nowMillis the time, or {@link StoreRequest#STORE_TIME}
     * @param space the layout and prefix of the target deployment
     * @return the call, whose reply reads into the {@link Evaluation} of the take
     * @throws IllegalArgumentException as {@link BudgetLease#checkExchange} does
     */
    public static ScriptCall<Evaluation> exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis,
            KeySpace space) {
        BudgetLease.checkExchange(returned, stampMillis, taking);
        Objects.requireNonNull(used, "used must not be null");
        Objects.requireNonNull(space, "space must not be null");
        String[] head = {
            EXCHANGE,
            time(nowMillis),
            taking.entryId(),
            stampMillis + ":" + returned.entryId(),
            Long.toString(returnMark(returned))
        };
        int windowCount = taking.budget().windows().size();
        return leaseCall(
                taking,
                space,
                head,
                List.of(window -> Long.toString(returned.weightIn(window)), kept(returned, requestsUsed, used)),
                reply -> ScriptReply.evaluation(reply, windowCount));
    }

    /** How long a lease's return is marked: a second return (of other counts) changes nothing until its entry has left. */
    private static long returnMark(BudgetLease lease) {
        long longest = 0;
        for (Window window : lease.budget().windows()) {
            longest = Math.max(longest, window.lengthMillis());
        }
        return Math.min(longest + lease.durationMillis(), Settlement.REPEAT_GUARD.toMillis());
    }

    /** What a returned lease keeps in each window: what was used, at most its weight there. */
    private static Function<Window, String> kept(BudgetLease lease, long requestsUsed, Amounts used) {
        return window -> Long.toString(Math.max(
                0, Math.min(lease.weightIn(window), window.countsRequests() ? requestsUsed : used.get(window.unit()))));
    }

    private static <T> ScriptCall<T> leaseCall(
            BudgetLease lease,
            KeySpace space,
            String[] head,
            List<Function<Window, String>> after,
            Function<@Nullable Object, T> reader) {
        StoreRequest.Scope budget = lease.budget();
        List<String> keys = new ArrayList<>();
        List<String> args = new ArrayList<>(Arrays.asList(head));
        String precision = "l" + lease.durationMillis();
        for (Window window : budget.windows()) {
            keys.add(space.key(budget, window));
            if (KeySpace.hasSumKey(window)) {
                keys.add(space.sumKey(budget, window));
            }
            args.add(Long.toString(window.lengthMillis()));
            args.add(Long.toString(window.limit()));
            args.add(window.countsRequests() ? "" : Long.toString(lease.weightIn(window)));
            args.add(window.countsRequests() ? precision + ":" + lease.requests() : precision);
            for (Function<Window, String> more : after) {
                args.add(more.apply(window));
            }
        }
        if (!after.isEmpty()) {
            keys.add(space.settledKey(budget)); // a return is marked there
        }
        return new ScriptCall<>(keys.toArray(new String[0]), args.toArray(new String[0]), reader);
    }

    /**
     * Returns the keys.
     *
     * @return a fresh array
     */
    public String[] keys() {
        return keys.clone();
    }

    /**
     * Returns the arguments.
     *
     * @return a fresh array
     */
    public String[] args() {
        return args.clone();
    }

    /**
     * Reads the script's reply.
     *
     * @param reply the driver's decoded reply
     * @return what it means
     * @throws dev.ratelimit.api.RateLimiterUnavailableException if the reply is malformed
     */
    public T read(@Nullable Object reply) {
        return reader.apply(reply);
    }

    @Override
    public String toString() {
        return "ScriptCall{keys=" + Arrays.toString(keys) + ", args=" + Arrays.toString(args) + "}";
    }
}
