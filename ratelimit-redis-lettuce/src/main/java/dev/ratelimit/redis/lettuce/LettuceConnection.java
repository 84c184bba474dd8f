package dev.ratelimit.redis.lettuce;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.redis.internal.KeySpace;
import dev.ratelimit.redis.internal.RedisFailures;
import dev.ratelimit.redis.internal.StoreCheck;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.RedisException;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.sync.BaseRedisCommands;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.ArrayOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.lettuce.core.protocol.ConnectionIntent;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The store's one connection: opened in the background from the store's creation (again by a check
 * after a failed attempt), checks that arrive meanwhile waiting in arrival order, the deployment
 * checked on the first connection that reaches Redis, and a connection Redis closed replaced.
 *
 * <p>The connection is opened on a client the store may not own, so everything the store needs of
 * it is done here, on the connection, and never through the client's options: the command timeout
 * is set on the connection; a check is refused at once while the connection is not open (whatever
 * the client's {@code DisconnectedBehavior}); on a standalone or Sentinel connection the first
 * disconnect closes it, so that the client's own reconnection can never re-send a check Redis may
 * already have recorded, and the store opens a fresh one.
 */
final class LettuceConnection {

    static final String NAME = "Lettuce";
    private static final System.Logger LOG = System.getLogger("dev.ratelimit.redis");
    private static final Executor CONNECTOR = task -> {
        Thread thread = new Thread(task, "ratelimit-lettuce-connect");
        thread.setDaemon(true);
        thread.start();
    };

    /** How often the store tries to replace a connection Redis closed, until it succeeds. */
    static final long RECONNECT_INTERVAL_MILLIS = 100;

    private final KeySpace keys;
    private final Duration timeout;
    private final Duration connectTimeout;
    private final Supplier<Connected> connector;
    private final boolean replacesClosedConnections;
    private final AtomicReference<@Nullable CompletableFuture<Connected>> connection = new AtomicReference<>();
    private final ConcurrentLinkedQueue<Waiting<?>> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean reconnecting = new AtomicBoolean();
    private volatile long lastFailedAttemptNanos = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
    private volatile boolean checked;
    private volatile long lastMisconfiguredLogNanos;
    private volatile boolean closed;

    /**
     * Creates the connection handling; nothing is opened until {@link #connectEagerly()} or a check.
     *
     * @param keys the store's keys, for the startup check
     * @param timeout the command timeout set on every connection opened
     * @param connectTimeout how long a check waits for a connection being opened
     * @param connector opens one connection
     * @param replacesClosedConnections whether the store itself replaces a connection Redis closed
     *     (standalone and Sentinel), or leaves its node connections to Lettuce (cluster)
     */
    LettuceConnection(
            KeySpace keys,
            Duration timeout,
            Duration connectTimeout,
            Supplier<Connected> connector,
            boolean replacesClosedConnections) {
        this.keys = keys;
        this.timeout = timeout;
        this.connectTimeout = connectTimeout;
        this.connector = connector;
        this.replacesClosedConnections = replacesClosedConnections;
    }

    /**
     * An open connection, its scripting commands, and a way to run any command for the startup check.
     *
     * @param boundsCommands whether the store must bound each command's wait itself: the client's
     *     {@link TimeoutOptions} do not time commands out by the connection's timeout
     * @param disconnected set at the connection's first disconnect: from then on no check is sent on
     *     it, even if the client's own reconnection opens it again before it is closed and replaced
     */
    record Connected(
            StatefulConnection<String, String> connection,
            RedisScriptingAsyncCommands<String, String> commands,
            BaseRedisCommands<String, String> sync,
            boolean boundsCommands,
            AtomicBoolean disconnected) {

        /** Whether checks may be sent on this connection: open, and never disconnected since it was opened. */
        boolean usable() {
            return !disconnected.get() && connection.isOpen();
        }

        Connected(
                StatefulConnection<String, String> connection,
                RedisScriptingAsyncCommands<String, String> commands,
                BaseRedisCommands<String, String> sync) {
            this(
                    connection,
                    commands,
                    sync,
                    !timesOutByConnection(connection.getOptions().getTimeoutOptions()),
                    new AtomicBoolean());
        }

        private static boolean timesOutByConnection(TimeoutOptions options) {
            return options.isTimeoutCommands() && options.isApplyConnectionTimeout();
        }

        static Connected of(StatefulRedisConnection<String, String> connection) {
            return new Connected(connection, connection.async(), connection.sync());
        }

        StoreCheck.Commands commandsForCheck() {
            return (key, command) -> {
                CommandArgs<String, String> args = new CommandArgs<>(StringCodec.UTF8);
                for (int i = 1; i < command.length; i++) {
                    if (command[i].equals(key)) {
                        args.addKey(command[i]);
                    } else {
                        args.add(command[i]);
                    }
                }
                try {
                    return sync.dispatch(CommandType.valueOf(command[0]), new ArrayOutput<>(StringCodec.UTF8), args);
                } catch (RedisCommandExecutionException e) {
                    throw new StoreCheck.ReplyError(String.valueOf(e.getMessage()), e);
                }
            };
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
            return new Connected(connection, connection.async(), connection.sync());
        }
    }

    /**
     * Runs {@code send} on the connection: at once when it is open, otherwise once it has been
     * opened, in the order the checks arrived, failing after the connect timeout.
     */
    <T> CompletableFuture<T> submit(Function<Connected, CompletableFuture<T>> send) {
        CompletableFuture<Connected> pending;
        try {
            pending = connection();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(RedisFailures.unavailable(NAME, e));
        }
        if (pending.isDone() && !pending.isCompletedExceptionally()) {
            Connected connected = pending.join();
            if (!connected.usable()) {
                // refused here rather than left to the client, which may queue it until it reconnects
                replace(connected);
                return CompletableFuture.failedFuture(RedisFailures.unavailable(
                        NAME, new RedisException("Not connected; the store is opening a new connection")));
            }
            return send.apply(connected);
        }
        // Checks that arrive while the connection is being opened wait in arrival order: dependents of
        // a CompletableFuture would run newest first, sending later timestamps before earlier ones.
        CompletableFuture<T> result = new CompletableFuture<>();
        waiting.add(new Waiting<>(send, result));
        pending.whenComplete((connected, failure) -> drainWaiting(pending));
        return result.orTimeout(connectTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .exceptionallyCompose(failure -> CompletableFuture.failedFuture(
                        failure instanceof RateLimiterUnavailableException
                                ? failure
                                : failure instanceof TimeoutException
                                        ? new RateLimiterUnavailableException("Redis (" + NAME
                                                + ") could not be connected to within the connect timeout of "
                                                + connectTimeout.toMillis() + " ms")
                                        : RedisFailures.unavailable(NAME, failure)));
    }

    /** A check waiting for the connection to open. */
    private record Waiting<T>(Function<Connected, CompletableFuture<T>> send, CompletableFuture<T> result) {

        void sendOn(Connected connected) {
            send.apply(connected).whenComplete((value, e) -> {
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
                    next.sendOn(attempt.join());
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

    /**
     * Waits for the first connection attempt, up to the connect timeout, and throws when it found the
     * deployment misconfigured; a Redis that cannot be reached is left to later checks.
     *
     * @throws IllegalStateException naming what is wrong: credentials, permissions, the script
     */
    void awaitStartupCheck() {
        CompletableFuture<Connected> first = connection.get();
        if (first == null) {
            return;
        }
        try {
            first.get(connectTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Misconfigured misconfigured) {
                close();
                throw new IllegalStateException(misconfigured.getMessage(), misconfigured.getCause());
            }
        } catch (TimeoutException e) {
            // still connecting: checks wait for it, or fail and retry
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Returns the connection future, starting a connection attempt when there is none or the last one failed. */
    private CompletableFuture<Connected> connection() {
        while (true) {
            if (closed) {
                throw new RateLimiterUnavailableException("The Redis (" + NAME + ") store is closed");
            }
            CompletableFuture<Connected> current = connection.get();
            if (current != null
                    && (!current.isCompletedExceptionally()
                            || System.nanoTime() - lastFailedAttemptNanos
                                    < TimeUnit.MILLISECONDS.toNanos(RECONNECT_INTERVAL_MILLIS))) {
                // a connection, an attempt under way, or one that failed a moment ago: no new attempt per check
                return current;
            }
            CompletableFuture<Connected> attempt = new CompletableFuture<>();
            if (connection.compareAndSet(current, attempt)) {
                CONNECTOR.execute(() -> {
                    try {
                        Connected connected = open();
                        attempt.complete(connected);
                        if (closed) {
                            connected.connection().closeAsync();
                        }
                    } catch (RuntimeException | Error e) {
                        lastFailedAttemptNanos = System.nanoTime();
                        attempt.completeExceptionally(e);
                    }
                });
                return attempt;
            }
        }
    }

    /** Opens a connection; the first one that reaches Redis also runs the startup check on it. */
    private Connected open() {
        Connected connected;
        try {
            connected = connector.get();
        } catch (RuntimeException e) {
            String refused = StoreCheck.credentialsRefused(e);
            if (refused != null) {
                throw misconfigured(StoreCheck.refusedCredentials(NAME, refused));
            }
            throw e;
        }
        connected.connection().setTimeout(timeout);
        if (replacesClosedConnections) {
            closeOnDisconnect(connected);
        }
        if (!checked) {
            try {
                StoreCheck.run(NAME, keys, connected.commandsForCheck());
                checked = true;
            } catch (IllegalStateException e) {
                connected.connection().closeAsync();
                throw misconfigured(e);
            } catch (RuntimeException e) {
                connected.connection().closeAsync();
                throw e;
            }
        }
        return connected;
    }

    /**
     * Closes the connection at its first disconnect and replaces it: a client that reconnects by
     * itself (Lettuce's default, and Spring Data Redis's) would re-send after reconnecting the
     * commands that were in flight, and a check Redis had already recorded would then count twice.
     * Closed, the connection fails those commands instead; its checks fail open.
     */
    private void closeOnDisconnect(Connected connected) {
        connected.connection().addListener(new RedisConnectionStateListener() {
            @Override
            public void onRedisDisconnected(RedisChannelHandler<?, ?> handler) {
                connected.disconnected().set(true);
                connected.connection().closeAsync();
                CompletableFuture<Connected> current = connection.get();
                // only the connection in use is replaced, not one closed after a failed startup check
                if (current != null && current.getNow(null) == connected) {
                    replace(connected);
                }
            }
        });
    }

    private Misconfigured misconfigured(IllegalStateException problem) {
        // every failed attempt finds it again: say it at once, then at most every ten seconds
        long now = System.nanoTime();
        long last = lastMisconfiguredLogNanos;
        if (last == 0 || now - last >= TimeUnit.SECONDS.toNanos(10)) {
            lastMisconfiguredLogNanos = now;
            LOG.log(System.Logger.Level.ERROR, "Rate limiter store ({0}): {1}", NAME, problem.getMessage());
        }
        return new Misconfigured(problem);
    }

    /** The deployment cannot work as configured: every check fails with this message until it is fixed. */
    static final class Misconfigured extends RateLimiterUnavailableException {

        private static final long serialVersionUID = 1L;

        Misconfigured(IllegalStateException problem) {
            super(String.valueOf(problem.getMessage()), problem);
        }
    }

    /**
     * Replaces a connection Redis closed (killed connection, restart, failover) or that now points
     * at a replica, trying every {@value #RECONNECT_INTERVAL_MILLIS} ms until Redis accepts one:
     * Lettuce's own reconnection backs off for seconds, and checks must be exact again as soon as
     * Redis is. Checks meanwhile fail fast on the old connection.
     */
    private void replace(Connected dead) {
        if (!replacesClosedConnections || closed || !reconnecting.compareAndSet(false, true)) {
            return;
        }
        CONNECTOR.execute(() -> replaceNow(dead));
    }

    private void replaceNow(Connected dead) {
        if (closed) {
            reconnecting.set(false);
            return;
        }
        Connected fresh;
        try {
            fresh = open();
        } catch (RuntimeException e) {
            CompletableFuture.delayedExecutor(RECONNECT_INTERVAL_MILLIS, TimeUnit.MILLISECONDS, CONNECTOR)
                    .execute(() -> replaceNow(dead));
            return;
        }
        connection.set(CompletableFuture.completedFuture(fresh));
        reconnecting.set(false);
        dead.connection().closeAsync();
        if (closed) {
            fresh.connection().closeAsync();
        }
    }

    /** After a failed command: a closed connection, or one to a replica after a failover, is replaced. */
    void failed(Connected connected, Throwable failure) {
        Throwable cause = RedisFailures.unwrap(failure);
        String message = cause.getMessage();
        if (!connected.usable() || (message != null && message.startsWith("READONLY"))) {
            replace(connected);
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes the connection, if it was opened; the client stays open. */
    void close() {
        closed = true;
        CompletableFuture<Connected> current = connection.get();
        if (current != null) {
            if (current.isDone() && !current.isCompletedExceptionally()) {
                current.join().connection().close();
            }
        }
    }
}
