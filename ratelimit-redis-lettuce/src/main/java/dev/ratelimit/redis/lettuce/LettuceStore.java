package dev.ratelimit.redis.lettuce;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.redis.internal.KeyLayout;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import dev.ratelimit.redis.internal.ScriptCall;
import dev.ratelimit.redis.internal.SlidingWindowScript;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.protocol.ConnectionIntent;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The Lettuce store: one connection, opened in the background from creation (again by a check after
 * a failed attempt), one {@code EVALSHA} per check, {@code EVAL} only after {@code NOSCRIPT}.
 */
final class LettuceStore implements CloseableWindowStore {

    private static final String NAME = "Lettuce";
    private static final Executor CONNECTOR = task -> {
        Thread thread = new Thread(task, "ratelimit-lettuce-connect");
        thread.setDaemon(true);
        thread.start();
    };

    private final KeySpace keys;
    private final Duration timeout;
    private final Duration connectTimeout;
    private final Supplier<Connected> connector;
    private final AtomicReference<@Nullable CompletableFuture<Connected>> connection = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Waiting> waiting = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    LettuceStore(KeySpace keys, Duration timeout, Duration connectTimeout, Supplier<Connected> connector) {
        this.keys = keys;
        this.timeout = timeout;
        this.connectTimeout = connectTimeout;
        this.connector = connector;
    }

    /** An open connection and its scripting commands. */
    record Connected(
            StatefulConnection<String, String> connection, RedisScriptingAsyncCommands<String, String> commands) {

        static Connected of(StatefulRedisConnection<String, String> connection) {
            return new Connected(connection, connection.async());
        }

        static Connected ofCluster(StatefulRedisClusterConnection<String, String> connection) {
            // Node connections are otherwise opened by the first command routed to a node, and with
            // REJECT_COMMANDS that command would be rejected while its connection is being opened.
            for (RedisClusterNode node : connection.getPartitions()) {
                if (node.is(RedisClusterNode.NodeFlag.UPSTREAM)) {
                    try {
                        connection.getConnection(
                                node.getUri().getHost(), node.getUri().getPort(), ConnectionIntent.WRITE);
                    } catch (RuntimeException e) {
                        // that node is down: its commands fail until Lettuce reaches it
                    }
                }
            }
            return new Connected(connection, connection.async());
        }
    }

    @Override
    public Evaluation evaluate(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return await(run(ScriptCall.reserve(request, keys)));
    }

    @Override
    public CompletionStage<Evaluation> evaluateAsync(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return run(ScriptCall.reserve(request, keys));
    }

    @Override
    public Evaluation peek(StoreRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        return await(run(ScriptCall.peek(request, keys)));
    }

    @Override
    public void settle(Settlement settlement) {
        await(settleAsync(settlement).toCompletableFuture());
    }

    @Override
    public CompletionStage<Void> settleAsync(Settlement settlement) {
        Objects.requireNonNull(settlement, "settlement must not be null");
        List<ScriptCall<Boolean>> calls = ScriptCall.settle(settlement, keys);
        CompletableFuture<?>[] runs = new CompletableFuture<?>[calls.size()];
        for (int i = 0; i < runs.length; i++) {
            runs[i] = run(calls.get(i));
        }
        return CompletableFuture.allOf(runs);
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
        CompletableFuture<Connected> pending;
        try {
            pending = connection();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(RedisFailures.unavailable(NAME, e));
        }
        if (pending.isDone() && !pending.isCompletedExceptionally()) {
            return send(pending.join(), call);
        }
        // Checks that arrive while the connection is being opened wait in arrival order: dependents of
        // a CompletableFuture would run newest first, sending later timestamps before earlier ones.
        CompletableFuture<T> result = new CompletableFuture<>();
        waiting.add(new Waiting<>(call, result));
        pending.whenComplete((connected, failure) -> drainWaiting(pending));
        return result.orTimeout(connectTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionallyCompose(failure -> CompletableFuture.failedFuture(
                        failure instanceof RateLimiterUnavailableException
                                ? failure
                                : RedisFailures.unavailable(NAME, failure)));
    }

    /** A check waiting for the connection to open. */
    private record Waiting<T>(ScriptCall<T> call, CompletableFuture<T> result) {

        void sendOn(LettuceStore store, Connected connected) {
            store.send(connected, call).whenComplete((value, e) -> {
                if (e == null) {
                    result.complete(value);
                } else {
                    result.completeExceptionally(e);
                }
            });
        }
    }

    /** Sends (or fails) the waiting checks in arrival order once {@code attempt} has settled. */
    private void drainWaiting(CompletableFuture<Connected> attempt) {
        synchronized (waiting) {
            Waiting<?> next;
            while ((next = waiting.poll()) != null) {
                if (next.result().isDone()) {
                    continue; // timed out while waiting
                }
                if (attempt.isCompletedExceptionally()) {
                    Throwable failure = attempt.handle((connected, e) -> e).join();
                    next.result().completeExceptionally(RedisFailures.unavailable(NAME, failure));
                } else {
                    next.sendOn(this, attempt.join());
                }
            }
        }
    }

    /** Starts opening the connection in the background so that the first checks need not wait for it. */
    void connectEagerly() {
        try {
            connection();
        } catch (RuntimeException e) {
            // closed already: nothing to do
        }
    }

    /** Returns the connection future, starting a connection attempt when there is none or the last one failed. */
    private CompletableFuture<Connected> connection() {
        while (true) {
            if (closed) {
                throw new RateLimiterUnavailableException("The Redis (" + NAME + ") store is closed");
            }
            CompletableFuture<Connected> current = connection.get();
            if (current != null && !current.isCompletedExceptionally()) {
                return current;
            }
            CompletableFuture<Connected> attempt = new CompletableFuture<>();
            if (connection.compareAndSet(current, attempt)) {
                CONNECTOR.execute(() -> {
                    try {
                        Connected connected = connector.get();
                        connected.connection().setTimeout(timeout);
                        attempt.complete(connected);
                        if (closed) {
                            connected.connection().closeAsync();
                        }
                    } catch (RuntimeException | Error e) {
                        attempt.completeExceptionally(e);
                    }
                });
                return attempt;
            }
        }
    }

    private <T> CompletableFuture<T> send(Connected connected, ScriptCall<T> call) {
        String[] keys = call.keys();
        String[] args = call.args();
        CompletableFuture<T> result = new CompletableFuture<>();
        RedisFuture<List<Object>> evalsha;
        try {
            evalsha = connected.commands().evalsha(SlidingWindowScript.sha1(), ScriptOutputType.MULTI, keys, args);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(RedisFailures.unavailable(NAME, e));
        }
        evalsha.whenComplete((reply, failure) -> {
            if (failure == null) {
                complete(result, call, reply);
            } else if (RedisFailures.unwrap(failure) instanceof RedisNoScriptException) {
                // The script cache was flushed or this node never saw the script: EVAL sends and caches it.
                RedisFuture<List<Object>> eval;
                try {
                    eval = connected.commands().eval(SlidingWindowScript.source(), ScriptOutputType.MULTI, keys, args);
                } catch (RuntimeException e) {
                    result.completeExceptionally(RedisFailures.unavailable(NAME, e));
                    return;
                }
                eval.whenComplete((retried, evalFailure) -> {
                    if (evalFailure == null) {
                        complete(result, call, retried);
                    } else {
                        result.completeExceptionally(RedisFailures.unavailable(NAME, evalFailure));
                    }
                });
            } else {
                result.completeExceptionally(RedisFailures.unavailable(NAME, failure));
            }
        });
        return result;
    }

    private static <T> void complete(CompletableFuture<T> result, ScriptCall<T> call, @Nullable Object reply) {
        try {
            result.complete(call.read(reply));
        } catch (RuntimeException e) {
            result.completeExceptionally(RedisFailures.unavailable(NAME, e));
        }
    }

    /** Closes the store's connection, if it was opened; the client stays open. */
    @Override
    public void close() {
        closed = true;
        CompletableFuture<Connected> current = connection.get();
        if (current != null) {
            if (current.isDone() && !current.isCompletedExceptionally()) {
                current.join().connection().close();
            }
        }
    }

    @Override
    public String toString() {
        return "LettuceWindowStore{" + keys.layout().name().toLowerCase(java.util.Locale.ROOT) + ", prefix="
                + keys.prefix() + ", commandTimeout=" + timeout.toMillis() + "ms" + (closed ? ", closed" : "") + "}";
    }
}
