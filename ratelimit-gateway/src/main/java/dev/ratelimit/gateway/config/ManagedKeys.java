package dev.ratelimit.gateway.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.admin.AdminServlet;
import dev.ratelimit.gateway.config.GatewayConfig.ApiKey;
import dev.ratelimit.gateway.config.GatewayConfig.TierConfig;
import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisLink;
import dev.ratelimit.gateway.store.RedisTarget;
import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The API keys managed through the admin API ({@link AdminServlet}), beside those of the
 * configuration file. A key is kept as the SHA-256 of its secret, never the secret.
 *
 * <p>Without Redis they live in this process's memory: each gateway process has its own, and they
 * are gone when it stops. With Redis ({@code REDIS_URL} or {@code REDIS_CLUSTER_URL}) they live in
 * one hash, {@code <prefix>:admin-keys} (field: the key's id; value: its JSON), shared by every
 * gateway on that Redis. A change is written there in one command, with a new version in the hash's
 * field {@value #VERSION_FIELD} (so it is made whole or not at all, and a read of the hash sees the
 * keys and their version together), then the id is announced on {@code <prefix>:admin-keys:changes}. Each process answers
 * requests from a cache of every managed key, indexed by digest (no Redis command on a request's
 * way): it reads the hash whole when its subscription (re)connects, reads one key again on each
 * announcement (a Redis round trip after the change), and reads the version every {@link #POLL_EVERY}
 * and the hash whole again when it moved, which bounds how late a change can arrive when an
 * announcement is lost. So a revocation reaches every process within a second. While Redis cannot
 * be reached, a process goes by the keys it knows, and the admin API's reads and writes answer 503.
 */
public final class ManagedKeys implements AutoCloseable {

    /** Reads and writes the keys as they are stored: JSON this class wrote. */
    private static final com.fasterxml.jackson.databind.json.JsonMapper JSON =
            com.fasterxml.jackson.databind.json.JsonMapper.builder().build();

    private static final System.Logger LOG = System.getLogger(ManagedKeys.class.getName());
    /** How often a process on Redis checks the version for changes whose announcement it missed. */
    static final Duration POLL_EVERY = Duration.ofMillis(250);
    /** The hash's field that changes with every change; no id has a '~'. */
    static final String VERSION_FIELD = "~version";
    /** Deletes a key and moves the version in one step (a single key: a cluster runs it too). */
    private static final String REVOKE = "redis.call('HDEL', KEYS[1], ARGV[1]);" + " redis.call('HSET', KEYS[1], '"
            + VERSION_FIELD + "', ARGV[2]); return 1";

    /**
     * One managed key.
     *
     * @param id its name in the admin API, not secret
     * @param sha256 the SHA-256 of its secret, hex
     * @param previousSha256 the SHA-256 of the secret it replaced at its last rotation, hex, valid
     *     until {@code previousUntil}; {@code null} when there is none
     */
    public record Key(
            String id,
            String tenant,
            String tier,
            @Nullable String team,
            @Nullable Instant expiresAt,
            Map<String, String> metadata,
            Map<String, String> windows,
            Instant created,
            Instant updated,
            String sha256,
            @Nullable String previousSha256,
            @Nullable Instant previousUntil) {

        public Key {
            metadata = Map.copyOf(metadata);
            windows = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(windows));
        }

        /**
         * The key's own windows as the budget they are kept in, {@code key:<id>}, charged with every
         * metered request of the key beside its tenant's; {@code null} when it has none.
         *
         * @throws IllegalArgumentException if a window does not parse (a stored key the API checked)
         */
        @Nullable
        SharedBudget budget() {
            if (windows.isEmpty()) {
                return null;
            }
            List<Window> parsed = new java.util.ArrayList<>(windows.size());
            windows.forEach((name, spec) -> parsed.add(TierPolicy.parseWindow(name, spec)));
            return new SharedBudget("key:" + id, parsed);
        }

        /** As the admin API shows it: no digest, and never the secret. */
        public ObjectNode view(Instant now) {
            ObjectNode view = JSON.createObjectNode();
            view.put("id", id);
            view.put("tenant", tenant);
            view.put("tier", tier);
            view.put("team", team);
            view.put("expires-at", expiresAt == null ? null : expiresAt.toString());
            view.put("expired", expiresAt != null && !now.isBefore(expiresAt));
            ObjectNode meta = view.putObject("metadata");
            new java.util.TreeMap<>(metadata).forEach(meta::put);
            ObjectNode own = view.putObject("windows");
            windows.forEach(own::put);
            view.put("created", created.toString());
            view.put("updated", updated.toString());
            view.put(
                    "previous-key-valid-until",
                    previousUntil == null || !now.isBefore(previousUntil) ? null : previousUntil.toString());
            return view;
        }

        /** As it is stored: the view's fields and the digests. */
        public String stored() {
            ObjectNode json = view(Instant.EPOCH);
            json.remove("expired");
            json.put("previous-key-valid-until", previousUntil == null ? null : previousUntil.toString());
            json.put("sha256", sha256);
            json.put("previous-sha256", previousSha256);
            try {
                return JSON.writeValueAsString(json);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
        }

        static Key parse(String stored) {
            try {
                JsonNode json = JSON.readTree(stored);
                Map<String, String> metadata = new LinkedHashMap<>();
                json.path("metadata")
                        .fields()
                        .forEachRemaining(
                                e -> metadata.put(e.getKey(), e.getValue().asText()));
                Map<String, String> windows = new LinkedHashMap<>(); // absent in a key stored before them
                json.path("windows")
                        .fields()
                        .forEachRemaining(
                                e -> windows.put(e.getKey(), e.getValue().asText()));
                return new Key(
                        json.path("id").asText(),
                        json.path("tenant").asText(),
                        json.path("tier").asText(),
                        text(json, "team"),
                        instant(text(json, "expires-at")),
                        metadata,
                        windows,
                        Objects.requireNonNull(instant(text(json, "created")), "created"),
                        Objects.requireNonNull(instant(text(json, "updated")), "updated"),
                        json.path("sha256").asText(),
                        text(json, "previous-sha256"),
                        instant(text(json, "previous-key-valid-until")));
            } catch (JsonProcessingException | RuntimeException e) {
                throw new IllegalArgumentException("unreadable managed key: " + e.getMessage(), e);
            }
        }

        private static @Nullable String text(JsonNode json, String field) {
            JsonNode value = json.get(field);
            return value == null || value.isNull() ? null : value.asText();
        }

        private static @Nullable Instant instant(@Nullable String text) {
            return text == null ? null : Instant.parse(text);
        }
    }

    /** Redis could not take or give the keys: the admin API answers 503. */
    public static final class Unavailable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unavailable(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }

    /** A digest in the cache: the key, and whether it is the secret the key had before its rotation. */
    private record Entry(
            Key key, boolean previous, @Nullable SharedBudget budget) {}

    private final Clock clock;
    private final @Nullable RedisLink redis;
    private final String hash;
    private final String channel;
    /** Every managed key by id: the truth in memory, the cache on Redis. */
    private final Map<String, Key> byId = new HashMap<>();
    /** {@link #byId} by digest, current and previous; replaced whole on each change. */
    private volatile Map<ByteBuffer, Entry> byDigest = Map.of();

    private final @Nullable ScheduledExecutorService reader;
    private @Nullable String seenVersion;

    /**
     * @param redis the gateway's Redis, or {@code null} for this process's memory
     * @param keys the names of the hash and the channel ({@code admin.prefix})
     */
    public ManagedKeys(Clock clock, @Nullable RedisTarget redis, GatewayKeys keys) {
        this.clock = clock;
        this.hash = keys.managedKeys();
        this.channel = keys.managedKeyChanges();
        if (redis == null) {
            this.redis = null;
            this.reader = null;
            return;
        }
        RedisLink link = new RedisLink(
                redis,
                "Managed API keys",
                "this process goes by the managed keys it knows, and the admin API" + " answers 503");
        this.redis = link;
        // one thread applies every change from Redis, in the order they come
        ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread t = new Thread(runnable, "ratelimit-managed-keys");
            t.setDaemon(true);
            return t;
        });
        this.reader = thread;
        link.subscribe(channel, id -> thread.execute(() -> readOne(id)), () -> await(thread, this::readAll));
        long every = POLL_EVERY.toMillis();
        thread.scheduleWithFixedDelay(this::poll, every, every, TimeUnit.MILLISECONDS);
    }

    /** Where the keys are kept, for the banner, the status and the docs' promise. */
    public String description() {
        return redis == null
                ? "in this process's memory (per process, gone when it stops)"
                : "on Redis, hash " + hash + ", shared by every gateway on it";
    }

    /**
     * The API key of a presented secret's digest, with its tier and team from {@code config}, or
     * {@code null} when no managed key has it, it expired, it is an old secret past its grace, or its
     * tier is no longer configured. Memory only: no Redis command.
     */
    @Nullable
    public ApiKey find(byte[] digest, GatewayConfig config) {
        Map<ByteBuffer, Entry> index = byDigest;
        if (index.isEmpty()) {
            return null;
        }
        Entry entry = index.get(ByteBuffer.wrap(digest));
        if (entry == null) {
            return null;
        }
        Key key = entry.key();
        Instant now = clock.instant();
        Instant graceEnd = key.previousUntil();
        if ((key.expiresAt() != null && !now.isBefore(key.expiresAt()))
                || (entry.previous() && (graceEnd == null || !now.isBefore(graceEnd)))) {
            return null;
        }
        TierConfig tier = config.tiers().get(key.tier());
        if (tier == null) {
            return null;
        }
        Spending.Team team =
                key.team() == null ? null : config.spending().teams().get(key.team());
        if (key.team() != null && team == null) {
            return null;
        }
        return new ApiKey(digest, key.tenant(), tier, team, entry.budget());
    }

    /** A key's own windows, parsed once when the cache takes it; a key whose windows do not parse has none. */
    private static @Nullable SharedBudget budgetOf(Key key) {
        try {
            return key.budget();
        } catch (IllegalArgumentException e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "Managed key ''{0}'': its windows are ignored: {1}",
                    key.id(),
                    e.getMessage());
            return null;
        }
    }

    /** Every managed key, oldest first: from Redis when it is the store. */
    public List<Key> list() {
        Map<String, Key> all;
        if (redis == null) {
            synchronized (this) {
                all = new HashMap<>(byId);
            }
        } else {
            try {
                Map<String, String> stored = new HashMap<>(commands().hgetall(hash));
                stored.remove(VERSION_FIELD);
                all = parseAll(stored);
            } catch (RedisException e) {
                throw unavailable(e);
            }
        }
        List<Key> keys = new ArrayList<>(all.values());
        keys.sort(Comparator.comparing(Key::created).thenComparing(Key::id));
        return keys;
    }

    /** One managed key, or {@code null}: from Redis when it is the store. */
    @Nullable
    public Key get(String id) {
        if (redis == null) {
            synchronized (this) {
                return byId.get(id);
            }
        }
        if (id.startsWith("~")) {
            return null; // the version, not a key
        }
        try {
            String stored = commands().hget(hash, id);
            return stored == null ? null : Key.parse(stored);
        } catch (IllegalArgumentException e) {
            LOG.log(System.Logger.Level.WARNING, "Managed key {0} on Redis is unreadable, ignored: {1}", id, e);
            return null;
        } catch (RedisException e) {
            throw unavailable(e);
        }
    }

    /** The keys this process answers requests with, whatever the store says now. */
    public synchronized List<Key> cached() {
        return List.copyOf(byId.values());
    }

    /** Stores a new or changed key and announces it. */
    public void put(Key key) {
        write(key.id(), key);
    }

    /** Removes a key (a revocation) and announces it. */
    public void remove(String id) {
        write(id, null);
    }

    private void write(String id, @Nullable Key key) {
        if (redis != null) {
            try {
                RedisClusterCommands<String, String> commands = commands();
                String version = java.util.UUID.randomUUID().toString();
                if (key == null) {
                    commands.eval(REVOKE, io.lettuce.core.ScriptOutputType.INTEGER, new String[] {hash}, id, version);
                } else {
                    commands.hset(hash, Map.of(id, key.stored(), VERSION_FIELD, version));
                }
            } catch (RedisException e) {
                throw unavailable(e);
            }
        }
        apply(id, key);
        if (redis != null) {
            try {
                commands().publish(channel, id);
            } catch (RedisException | Unavailable e) {
                // made, not announced: the others read it at their next version check
                LOG.log(System.Logger.Level.WARNING, "Managed key {0} changed but not announced: {1}", id, e);
            }
        }
    }

    /**
     * Why {@code config} cannot be in force beside the managed keys this process knows, or {@code
     * null}: a key of the file that is also a managed key (either secret), or a managed key whose
     * tier or team the file does not have.
     */
    @Nullable
    public String conflict(GatewayConfig config) {
        Map<ByteBuffer, Entry> index = byDigest;
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < config.keys().size(); i++) {
            ApiKey key = config.keys().get(i);
            Entry managed = index.get(ByteBuffer.wrap(key.sha256()));
            if (managed != null) {
                problems.add("keys[" + i + "] (tenant '" + key.tenant() + "') is also the managed key '"
                        + managed.key().id() + "'" + (managed.previous() ? " (its secret before rotation)" : "")
                        + ": a key is in the file or managed by the admin API, not both");
            }
        }
        for (Key key : cached()) {
            if (!config.tiers().containsKey(key.tier())) {
                problems.add("the managed key '" + key.id() + "' has tier '" + key.tier() + "', which is not one of"
                        + " the tiers " + config.tiers().keySet());
            }
            if (key.team() != null && !config.spending().teams().containsKey(key.team())) {
                problems.add("the managed key '" + key.id() + "' is in team '" + key.team() + "', which is not one"
                        + " of the teams " + config.spending().teams().keySet());
            }
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    private synchronized void apply(String id, @Nullable Key key) {
        if (key == null) {
            byId.remove(id);
        } else {
            byId.put(id, key);
        }
        index();
    }

    private synchronized void replaceAll(Map<String, Key> all) {
        byId.clear();
        byId.putAll(all);
        index();
    }

    private void index() {
        Map<ByteBuffer, Entry> index = new HashMap<>();
        for (Key key : byId.values()) {
            if (key.previousSha256() != null) {
                index.put(ByteBuffer.wrap(hex(key.previousSha256())), new Entry(key, true, budgetOf(key)));
            }
        }
        for (Key key : byId.values()) { // a current secret wins over an old one, were they ever equal
            index.put(ByteBuffer.wrap(hex(key.sha256())), new Entry(key, false, budgetOf(key)));
        }
        byDigest = Map.copyOf(index);
    }

    private static byte[] hex(String sha256) {
        return HexFormat.of().parseHex(sha256);
    }

    public static String hex(byte[] sha256) {
        return HexFormat.of().formatHex(sha256);
    }

    /** On the reader thread: one key again, as an announcement named it. */
    private void readOne(String id) {
        onRedis(commands -> {
            String stored = commands.hget(hash, id);
            try {
                apply(id, stored == null ? null : Key.parse(stored));
            } catch (IllegalArgumentException e) {
                LOG.log(System.Logger.Level.WARNING, "Managed key {0} on Redis is unreadable, ignored: {1}", id, e);
            }
        });
    }

    /** On the reader thread: every key, and the version they are at. */
    private void readAll() {
        onRedis(this::readAll);
    }

    private void readAll(RedisClusterCommands<String, String> commands) {
        Map<String, String> stored = new HashMap<>(commands.hgetall(hash));
        String at = stored.remove(VERSION_FIELD);
        replaceAll(parseAll(stored));
        seenVersion = at;
    }

    /** On the reader thread: every key again when the version moved without this process hearing of it. */
    private void poll() {
        onRedis(commands -> {
            if (!Objects.equals(commands.hget(hash, VERSION_FIELD), seenVersion)) {
                readAll(commands);
            }
        });
    }

    /** Runs a read on Redis, unless it cannot be reached; a failure is logged (at most every 10 s). */
    private void onRedis(java.util.function.Consumer<RedisClusterCommands<String, String>> read) {
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands == null) {
            return;
        }
        try {
            read.accept(commands);
        } catch (RedisException e) {
            failed(e);
        }
    }

    private static Map<String, Key> parseAll(Map<String, String> stored) {
        Map<String, Key> all = new HashMap<>();
        stored.forEach((id, json) -> {
            try {
                all.put(id, Key.parse(json));
            } catch (IllegalArgumentException e) {
                LOG.log(System.Logger.Level.WARNING, "Managed key {0} on Redis is unreadable, ignored: {1}", id, e);
            }
        });
        return all;
    }

    private RedisClusterCommands<String, String> commands() {
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands == null) {
            throw new Unavailable("Redis cannot be reached", null);
        }
        return commands;
    }

    private void failed(RedisException e) {
        if (redis != null) {
            redis.failed(e);
        }
    }

    private Unavailable unavailable(RedisException e) {
        failed(e);
        return new Unavailable("Redis failed: " + e.getMessage(), e);
    }

    /** Runs {@code task} on the reader thread and waits for it (the first read, before the gateway listens). */
    private static void await(ScheduledExecutorService thread, Runnable task) {
        try {
            thread.submit(task).get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | java.util.concurrent.RejectedExecutionException e) {
            LOG.log(System.Logger.Level.WARNING, "Managed keys not read from Redis: {0}", String.valueOf(e));
        }
    }

    public Clock clock() {
        return clock;
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.shutdownNow();
        }
        if (redis != null) {
            redis.close();
        }
    }
}
