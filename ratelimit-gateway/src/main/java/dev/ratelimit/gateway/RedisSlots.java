package dev.ratelimit.gateway;

import dev.ratelimit.core.ThrottledWarning;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
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
 * and the key expires when no holder renews it. Like the limiter, the slots fail open: while Redis
 * cannot be reached a request is admitted without a slot, counted in {@code
 * gateway_slot_failures_total} and logged at most every 10 seconds.
 */
final class RedisSlots implements Slots {

    private static final System.Logger LOG = System.getLogger(RedisSlots.class.getName());
    private static final String SCRIPT = script();
    private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(500);
    private static final long CONNECT_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final RedisClient client;
    private final String leaseMillis;
    private final String idPrefix = UUID.randomUUID() + ":";
    private final AtomicLong ids = new AtomicLong();
    private final Map<String, String> held = new ConcurrentHashMap<>(); // slot id -> key
    private final ScheduledExecutorService renewer;
    private final Counter failures;
    private final String digest;
    private volatile @Nullable StatefulRedisConnection<String, String> connection;
    private long nextConnectNanos;
    private final ThrottledWarning warning = new ThrottledWarning(LOG, Duration.ofSeconds(10));

    RedisSlots(RedisClient client, Duration lease, MeterRegistry registry) {
        this.client = client;
        this.leaseMillis = Long.toString(lease.toMillis());
        this.failures = Counter.builder("gateway.slot.failures")
                .description("Slot operations that failed because Redis could not be reached (requests pass)")
                .register(registry);
        this.digest = sha1(SCRIPT);
        this.renewer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "gateway-slot-renewer");
            thread.setDaemon(true);
            return thread;
        });
        long every = Math.max(1, lease.toMillis() / 3);
        renewer.scheduleWithFixedDelay(this::renewAll, every, every, TimeUnit.MILLISECONDS);
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
                run(key, "release", id, "", "");
            }
        };
    }

    @Override
    public int inFlight(String tenant) {
        Long count = run(key(tenant), "count", "", "", "");
        return count == null ? -1 : count.intValue();
    }

    @Override
    public String description() {
        return "redis (sorted set per tenant, " + leaseMillis + " ms lease)";
    }

    private void renewAll() {
        held.forEach((id, key) -> run(key, "renew", id, "", leaseMillis));
    }

    private @Nullable Long run(String key, String op, String id, String cap, String lease) {
        RedisCommands<String, String> commands = commands();
        if (commands == null) {
            return null;
        }
        String[] keys = {key};
        try {
            try {
                return commands.evalsha(digest, ScriptOutputType.INTEGER, keys, op, id, cap, lease);
            } catch (RedisNoScriptException e) {
                return commands.eval(SCRIPT, ScriptOutputType.INTEGER, keys, op, id, cap, lease);
            }
        } catch (RedisException e) {
            failed(op, e);
            return null;
        }
    }

    private @Nullable RedisCommands<String, String> commands() {
        StatefulRedisConnection<String, String> current = connection;
        if (current != null) {
            return current.sync();
        }
        synchronized (this) {
            if (connection == null && System.nanoTime() - nextConnectNanos >= 0) {
                try {
                    StatefulRedisConnection<String, String> opened = client.connect();
                    opened.setTimeout(COMMAND_TIMEOUT); // Lettuce reconnects it by itself from now on
                    connection = opened;
                } catch (RedisException e) {
                    nextConnectNanos = System.nanoTime() + CONNECT_BACKOFF_NANOS;
                    failed("connect", e);
                }
            } else if (connection == null) {
                failures.increment();
            }
            StatefulRedisConnection<String, String> opened = connection;
            return opened == null ? null : opened.sync();
        }
    }

    private void failed(String op, RuntimeException e) {
        failures.increment();
        warning.warn(
                "In-flight slots: Redis failed ({0}: {1}); requests pass without a concurrency slot until it answers",
                op, e.toString());
    }

    @Override
    public void close() {
        renewer.shutdownNow();
        StatefulRedisConnection<String, String> current = connection;
        if (current != null) {
            current.close();
        }
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
