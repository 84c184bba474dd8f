package dev.ratelimit.gateway;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.core.ThrottledWarning;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Slots shared by every gateway process on one Redis: per tenant a sorted set of slot ids scored
 * by the end of their lease (server time), handled by one Lua script ({@code inflight_slots.lua}).
 *
 * <p>A held slot is renewed every third of its lease while its request runs, so a stream of any
 * length keeps it; if the process dies, renewals stop and the slot is dropped once its lease ends,
 * and the key expires when no holder renews it.
 *
 * <p>The slots have a Redis client and connection of their own, with Lettuce's auto-reconnect off: a closed connection is replaced by the slots themselves, at most
 * one attempt every {@link #RECONNECT_EVERY}, so they take slots again about as soon as Redis
 * answers, whatever the limiter's store does with its own connection. A release that fails while
 * Redis is away is kept and retried until Redis takes it, so a slot freed during an outage does not
 * stay counted for a whole lease afterwards.
 *
 * <p>While Redis cannot be reached, every failure is counted in {@code gateway_slot_failures_total}
 * and logged at most every 10 seconds, and {@link #problem()} says why. Failing open (the default,
 * like the limiter), a request is then admitted without a slot; failing closed, {@link #tryAcquire}
 * throws {@link RateLimiterUnavailableException} and the request gets 503.
 */
final class RedisSlots implements Slots {

    private static final System.Logger LOG = System.getLogger(RedisSlots.class.getName());
    private static final String SCRIPT = script();
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    private static final Duration CONNECT_TIMEOUT = Duration.ofMillis(500);
    /** The least time between two connection attempts while Redis is away. */
    static final Duration RECONNECT_EVERY = Duration.ofMillis(100);

    private final RedisClient client;
    private final String where;
    private final boolean failOpen;
    private final String leaseMillis;
    private final String idPrefix = UUID.randomUUID() + ":";
    private final AtomicLong ids = new AtomicLong();
    private final Map<String, String> held = new ConcurrentHashMap<>(); // slot id -> key
    private final Map<String, String> unreleased = new ConcurrentHashMap<>(); // released while Redis was away
    private final ScheduledExecutorService renewer;
    private final Counter failures;
    private final String digest;
    private volatile @Nullable StatefulRedisConnection<String, String> connection;
    private volatile @Nullable String problem = "not connected yet";
    private long nextConnectNanos;
    private final ThrottledWarning warning = new ThrottledWarning(LOG, Duration.ofSeconds(10));

    /**
     * Opens nothing yet: the first operation connects.
     *
     * @param uri the Redis server
     * @param lease how long a slot lives without renewal
     * @param failOpen whether a request passes without a slot while Redis cannot be reached
     * @param registry where {@code gateway.slot.failures} is counted
     */
    RedisSlots(RedisURI uri, Duration lease, boolean failOpen, MeterRegistry registry) {
        this.client = RedisClient.create(uri);
        // our own client: its options are ours to set (the store's client is left as it is)
        client.setOptions(ClientOptions.builder()
                .autoReconnect(false)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .socketOptions(
                        SocketOptions.builder().connectTimeout(CONNECT_TIMEOUT).build())
                .timeoutOptions(TimeoutOptions.enabled(COMMAND_TIMEOUT))
                .build());
        this.where = uri.getHost() + ":" + uri.getPort();
        this.failOpen = failOpen;
        this.leaseMillis = Long.toString(lease.toMillis());
        this.failures = Counter.builder("gateway.slot.failures")
                .description("Slot operations that failed because Redis could not be reached")
                .register(registry);
        this.digest = sha1(SCRIPT);
        this.renewer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gateway-slot-renewer");
            thread.setDaemon(true);
            return thread;
        });
        long every = Math.max(1, lease.toMillis() / 3);
        renewer.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
        long retry = RECONNECT_EVERY.toMillis();
        renewer.scheduleWithFixedDelay(this::retryReleases, retry, retry, TimeUnit.MILLISECONDS);
    }

    static String key(String tenant) {
        return "ratelimit:inflight:{" + tenant + "}";
    }

    @Override
    public @Nullable Slot tryAcquire(String tenant, int cap) {
        String id = idPrefix + ids.incrementAndGet();
        String key = key(tenant);
        Long taken = run(key, "acquire", id, Integer.toString(cap), leaseMillis);
        if (taken == null) {
            if (!failOpen) {
                throw new RateLimiterUnavailableException(
                        "Concurrency slots unavailable: Redis at " + where + " cannot be reached (" + problem + ")");
            }
            return () -> {}; // fail open: Redis is unreachable, the request runs without a slot
        }
        if (taken == 0) {
            return null;
        }
        held.put(id, key);
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                held.remove(id);
                if (run(key, "release", id, "", "") == null) {
                    unreleased.put(id, key); // retried once Redis answers
                }
            }
        };
    }

    @Override
    public int inFlight(String tenant) {
        Long count = run(key(tenant), "count", "", "", "");
        return count == null ? -1 : count.intValue();
    }

    @Override
    public @Nullable String problem() {
        RedisCommands<String, String> commands = commands();
        if (commands != null) {
            try {
                commands.ping();
                succeeded();
            } catch (RedisException e) {
                failed("ping", e);
            }
        }
        return problem;
    }

    @Override
    public String description() {
        return "redis (sorted set per tenant, " + leaseMillis + " ms lease)";
    }

    /** The slots held by requests of this process now. */
    int held() {
        return held.size();
    }

    /** The releases that failed and wait for Redis to come back. */
    int unreleased() {
        return unreleased.size();
    }

    private void renewAll() {
        held.forEach((id, key) -> run(key, "renew", id, "", leaseMillis));
    }

    private void retryReleases() {
        unreleased.forEach((id, key) -> {
            if (run(key, "release", id, "", "") != null) {
                unreleased.remove(id);
            }
        });
    }

    private @Nullable Long run(String key, String op, String id, String cap, String lease) {
        RedisCommands<String, String> commands = commands();
        if (commands == null) {
            return null;
        }
        String[] keys = {key};
        try {
            Long result;
            try {
                result = commands.evalsha(digest, ScriptOutputType.INTEGER, keys, op, id, cap, lease);
            } catch (RedisNoScriptException e) {
                result = commands.eval(SCRIPT, ScriptOutputType.INTEGER, keys, op, id, cap, lease);
            }
            succeeded();
            return result;
        } catch (RedisException e) {
            failed(op, e);
            return null;
        }
    }

    /**
     * The open connection's commands, after replacing a closed connection when the last attempt is
     * older than {@link #RECONNECT_EVERY}; {@code null} while there is none.
     */
    private @Nullable RedisCommands<String, String> commands() {
        StatefulRedisConnection<String, String> current = connection;
        if (current != null && current.isOpen()) {
            return current.sync();
        }
        synchronized (this) {
            current = connection;
            if (current != null && current.isOpen()) {
                return current.sync();
            }
            if (current != null) {
                connection = null;
                current.closeAsync(); // closed by Redis going away: auto-reconnect is off, we open a new one
            }
            if (System.nanoTime() - nextConnectNanos < 0) {
                failures.increment();
                return null;
            }
            try {
                StatefulRedisConnection<String, String> opened = client.connect();
                opened.setTimeout(COMMAND_TIMEOUT);
                connection = opened;
                return opened.sync();
            } catch (RedisException e) {
                nextConnectNanos = System.nanoTime() + RECONNECT_EVERY.toNanos();
                failed("connect", e);
                return null;
            }
        }
    }

    private void succeeded() {
        if (problem != null) {
            problem = null;
        }
    }

    private void failed(String op, RuntimeException e) {
        failures.increment();
        problem = "Redis at " + where + " failed (" + op + ": " + reason(e) + ")";
        warning.warn(
                failOpen
                        ? "In-flight slots: {0}; requests pass without a concurrency slot until it answers"
                        : "In-flight slots: {0}; requests get 503 until it answers",
                problem);
    }

    /** The driver's message without its exception class: it reaches the status page and /health. */
    private static String reason(RuntimeException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = root.getMessage() != null ? root.getMessage() : e.getMessage();
        return message == null ? "no answer" : message;
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        retryReleases(); // a last try for releases Redis missed: otherwise they wait out their lease
        StatefulRedisConnection<String, String> current = connection;
        if (current != null) {
            current.close();
        }
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }

    private static String script() {
        try (InputStream in = RedisSlots.class.getResourceAsStream("inflight_slots.lua")) {
            return new String(Objects.requireNonNull(in, "inflight_slots.lua").readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            byte[] hash =
                    java.security.MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(hash);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-1", e);
        }
    }
}
