package dev.ratelimit.redis.lettuce;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.BudgetLease;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import dev.ratelimit.redis.internal.ScriptCall;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import dev.ratelimit.redis.lettuce.LettuceConnection.Connected;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The Lettuce store: one {@code EVALSHA} per check, {@code EVAL} only after {@code NOSCRIPT}, on the
 * one connection a {@link LettuceConnection} opens and keeps.
 */
final class LettuceStore implements CloseableWindowStore {

    private static final String NAME = LettuceConnection.NAME;

    private final KeySpace keys;
    private final Duration timeout;
    private final Duration connectTimeout;
    private final LettuceConnection connection;
    private final @Nullable Executor completions;
    private final Runnable onClose;

    /**
     * Creates the store.
     *
     * @param replacesClosedConnections whether the store itself replaces a connection Redis closed
     *     (standalone and Sentinel), or leaves its node connections to Lettuce (cluster)
     * @param completions where the asynchronous evaluations' stages complete; {@code null} for the
     *     I/O thread that read the answer
     * @param onClose run once the connection is closed: shuts down a client the store created, and
     *     does nothing for a client it was given
     */
    LettuceStore(
            KeySpace keys,
            Duration timeout,
            Duration connectTimeout,
            Supplier<Connected> connector,
            boolean replacesClosedConnections,
            @Nullable Executor completions,
            Runnable onClose) {
        this.keys = keys;
        this.timeout = timeout;
        this.connectTimeout = connectTimeout;
        this.connection = new LettuceConnection(keys, timeout, connectTimeout, connector, replacesClosedConnections);
        this.completions = completions;
        this.onClose = onClose;
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return await(run(ScriptCall.reserve(request, keys)));
    }

    @Override
    public CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return handedOff(run(ScriptCall.reserve(request, keys)));
    }

    /** The stage of an asynchronous evaluation, completed on {@code completions} when there is one. */
    private <T> CompletionStage<T> handedOff(CompletableFuture<T> answer) {
        Executor executor = completions;
        if (executor == null) {
            return answer;
        }
        CompletableFuture<T> handed = new CompletableFuture<>();
        answer.whenCompleteAsync(
                (value, failure) -> {
                    if (failure == null) {
                        handed.complete(value);
                    } else {
                        handed.completeExceptionally(failure);
                    }
                },
                executor);
        return handed;
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return await(run(ScriptCall.peek(request, keys)));
    }

    @Override
    public void settle(Settlement settlement) {
        await(settling(settlement));
    }

    @Override
    public CompletionStage<Void> settleAsync(Settlement settlement) {
        // not handed off: a blocking commit waits for this stage, maybe on a thread of that executor
        return settling(settlement);
    }

    private CompletableFuture<Void> settling(Settlement settlement) {
        Objects.requireNonNull(settlement, "settlement must not be null");
        List<ScriptCall<Boolean>> calls = ScriptCall.settle(settlement, keys);
        CompletableFuture<?>[] runs = new CompletableFuture<?>[calls.size()];
        for (int i = 0; i < runs.length; i++) {
            runs[i] = run(calls.get(i));
        }
        return CompletableFuture.allOf(runs);
    }

    @Override
    public boolean renewLease(StoreRequest.Lease lease, String entryId, long nowMillis) {
        Objects.requireNonNull(lease, "lease must not be null");
        return await(run(ScriptCall.renewLease(lease, entryId, nowMillis, keys)));
    }

    @Override
    public long leasesHeld(StoreRequest.Lease lease, long nowMillis) {
        Objects.requireNonNull(lease, "lease must not be null");
        return await(run(ScriptCall.leasesHeld(lease, nowMillis, keys)));
    }

    @Override
    public Evaluation takeLease(BudgetLease lease, long nowMillis) {
        return await(run(ScriptCall.takeLease(lease, nowMillis, keys)));
    }

    @Override
    public Evaluation exchangeLease(
            BudgetLease returned,
            long stampMillis,
            long requestsUsed,
            Amounts used,
            BudgetLease taking,
            long nowMillis) {
        return await(run(ScriptCall.exchangeLease(returned, stampMillis, requestsUsed, used, taking, nowMillis, keys)));
    }

    @Override
    public void returnLease(BudgetLease lease, long stampMillis, long requestsUsed, Amounts used, long nowMillis) {
        await(run(ScriptCall.returnLease(lease, stampMillis, requestsUsed, used, nowMillis, keys)));
    }

    @Override
    public boolean atomicAcrossScopes() {
        return keys.layout() != KeyLayout.CLUSTER;
    }

    private <T> T await(CompletableFuture<T> result) {
        // The driver's command timeout completes the future; this bound is only a safety net
        // (connect wait, then at most EVALSHA and EVAL each within the timeout).
        long boundMillis = connectTimeout.toMillis() + 2 * timeout.toMillis() + 100;
        try {
            return result.get(boundMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw RedisFailures.unavailable(NAME, e);
        } catch (TimeoutException e) {
            throw new RateLimiterUnavailableException(
                    "Redis (" + NAME + ") did not answer within " + boundMillis + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RateLimiterUnavailableException("Interrupted while waiting for Redis (" + NAME + ")", e);
        }
    }

    private <T> CompletableFuture<T> run(ScriptCall<T> call) {
        return connection.submit(connected -> send(connected, call));
    }

    /** Starts opening the connection in the background so that the first checks need not wait for it. */
    void connectEagerly() {
        connection.connectEagerly();
    }

    /**
     * Waits for the first connection attempt, up to the connect timeout, and throws when it found the
     * deployment misconfigured; a Redis that cannot be reached is left to later checks.
     *
     * @throws IllegalStateException naming what is wrong: credentials, permissions, the script
     */
    void awaitStartupCheck() {
        connection.awaitStartupCheck();
    }

    private <T> CompletableFuture<T> send(Connected connected, ScriptCall<T> call) {
        String[] keys = call.keys();
        String[] args = call.args();
        CompletableFuture<T> result = new CompletableFuture<>();
        RedisFuture<List<Object>> evalsha;
        try {
            evalsha = connected.commands().evalsha(SlidingWindowScript.sha1(), ScriptOutputType.MULTI, keys, args);
        } catch (RuntimeException e) {
            connection.failed(connected, e);
            return CompletableFuture.failedFuture(RedisFailures.unavailable(NAME, e));
        }
        bound(connected, evalsha);
        evalsha.whenComplete((reply, failure) -> {
            if (failure == null) {
                complete(result, call, reply);
            } else if (RedisFailures.unwrap(failure) instanceof RedisNoScriptException) {
                // The script cache was flushed or this node never saw the script: EVAL sends and caches it.
                RedisFuture<List<Object>> eval;
                try {
                    eval = connected.commands().eval(SlidingWindowScript.source(), ScriptOutputType.MULTI, keys, args);
                    bound(connected, eval);
                } catch (RuntimeException e) {
                    result.completeExceptionally(RedisFailures.unavailable(NAME, e));
                    return;
                }
                eval.whenComplete((retried, evalFailure) -> {
                    if (evalFailure == null) {
                        complete(result, call, retried);
                    } else {
                        connection.failed(connected, evalFailure);
                        result.completeExceptionally(RedisFailures.unavailable(NAME, evalFailure));
                    }
                });
            } else {
                connection.failed(connected, failure);
                result.completeExceptionally(RedisFailures.unavailable(NAME, failure));
            }
        });
        return result;
    }

    /**
     * Bounds a command by the store's timeout when the client's options would let it wait longer:
     * completed exceptionally, a command Lettuce has not yet written is never written.
     */
    private void bound(Connected connected, RedisFuture<?> command) {
        if (connected.boundsCommands()) {
            command.toCompletableFuture().orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private static <T> void complete(CompletableFuture<T> result, ScriptCall<T> call, @Nullable Object reply) {
        try {
            result.complete(call.read(reply));
        } catch (RuntimeException e) {
            result.completeExceptionally(RedisFailures.unavailable(NAME, e));
        }
    }

    /** Closes the store's connection, if it was opened, and shuts down a client the store created. */
    @Override
    public void close() {
        boolean first = !connection.isClosed();
        connection.close();
        if (first) {
            onClose.run();
        }
    }

    @Override
    public String toString() {
        return "LettuceWindowStore{" + keys.layout().name().toLowerCase(java.util.Locale.ROOT) + ", prefix="
                + keys.prefix() + ", commandTimeout=" + timeout.toMillis() + "ms"
                + (connection.isClosed() ? ", closed" : "") + "}";
    }
}
