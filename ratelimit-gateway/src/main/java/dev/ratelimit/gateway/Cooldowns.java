package dev.ratelimit.gateway;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The models an upstream told the gateway to stop sending for a while (a 429 or 529 with {@code
 * retry-after}, or rate-limit headers saying none is left): until then their requests are answered
 * 429 by the gateway itself, except one probe per interval, whose success ends the cooldown early.
 *
 * <p>In memory for one process; on Redis ({@code REDIS_URL} or {@code REDIS_CLUSTER_URL}) shared by
 * every gateway process: one key per cooling model, {@code ratelimit:cooldown:{upstream}:{model}},
 * holding the end as epoch milliseconds and expiring then (PX), announced on the channel {@value #CHANNEL} (a process
 * subscribes at start and reads the keys again whenever its subscription connects, so it knows
 * the cooldowns set while it was away), and one key per probe interval, set with NX, so that of all
 * the processes exactly one lets the interval's probe through. A request asks only this process's
 * memory whether its model is cooling down: no Redis command on the way of a request while no
 * cooldown is in force. Another process learns of a new cooldown when the announcement arrives
 * (a Redis round trip later); a request it forwards meanwhile can still meet the upstream's 429. Times come from the gateway's clock
 * (the processes' clocks agree to NTP's precision, far below a retry-after). While Redis cannot be
 * reached the process falls back to what it knows itself, and logs it at most every 10 seconds.
 *
 * <p>On a Redis Cluster the keys spread over the masters by their upstream's hash tag: each key is
 * read and written on its own master, reading them all scans every master, and announcements go
 * through the cluster's pub/sub, which every node relays to its subscribers.
 */
final class Cooldowns implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Cooldowns.class.getName());
    /** The channel on which a process announces a cooldown it started or ended. */
    static final String CHANNEL = "ratelimit:cooldowns";
    /** The longest cooldown an upstream's header can set; a probe ends a wrong one sooner anyway. */
    static final Duration LONGEST = Duration.ofHours(1);
    /** The most (upstream, model) pairs remembered for the status page. */
    private static final int KNOWN_PAIRS = 1_000;

    /** One model cooling down, for the status page. */
    record Active(String upstream, String model, Instant until) {}

    private final Clock clock;
    private final MeterRegistry registry;
    private final @Nullable RedisLink redis;
    /** The cooldowns in force on Redis, as announced there or read at (re)subscription. */
    private final Map<String, Active> shared = new ConcurrentHashMap<>();

    private final Map<String, Active> local = new ConcurrentHashMap<>();
    private final Map<String, Long> probes = new ConcurrentHashMap<>();
    private final Map<String, Active> known = new ConcurrentHashMap<>();

    /**
     * @param redis the store's Redis server or cluster, or {@code null} for this process's memory
     */
    Cooldowns(Clock clock, @Nullable RedisTarget redis, MeterRegistry registry) {
        this.clock = clock;
        this.registry = registry;
        if (redis == null) {
            this.redis = null;
        } else {
            RedisLink link = new RedisLink(redis, "Upstream cooldowns", "this process goes by what it knows itself");
            this.redis = link;
            // the keys are read again each time the subscription connects: announcements made meanwhile were missed
            link.subscribe(CHANNEL, this::announced, this::readAll);
        }
    }

    /**
     * An announcement: {@code upstream model end}, the end 0 when the cooldown ended. An upstream's
     * name has no space and the end is a number, so the model is everything between the first space
     * and the last: a model name with spaces is read whole.
     */
    private void announced(String message) {
        int first = message.indexOf(' ');
        int last = message.lastIndexOf(' ');
        Long end = first > 0 && last > first + 1 ? parse(message.substring(last + 1)) : null;
        if (end == null) {
            return;
        }
        String upstream = message.substring(0, first);
        String model = message.substring(first + 1, last);
        String key = key(upstream, model);
        if (end <= clock.millis()) {
            shared.remove(key);
        } else {
            Active active = new Active(upstream, model, Instant.ofEpochMilli(end));
            shared.put(key, active);
            remember(key, active);
        }
    }

    /** Reads every cooldown key on Redis (every master of a cluster) into {@link #shared}. */
    private void readAll() {
        StatefulConnection<String, String> connection = redis == null ? null : redis.connection();
        if (connection == null) {
            return;
        }
        try {
            Map<String, Active> found = new HashMap<>();
            for (RedisClusterCommands<String, String> keyspace : RedisLink.keyspaces(connection)) {
                ScanCursor cursor = ScanCursor.INITIAL;
                do {
                    KeyScanCursor<String> page = keyspace.scan(
                            cursor,
                            ScanArgs.Builder.matches("ratelimit:cooldown:*").limit(100));
                    for (String key : page.getKeys()) {
                        Active active =
                                fromKey(key, RedisLink.commands(connection).get(key));
                        if (active != null) {
                            found.put(key, active);
                        }
                    }
                    cursor = page;
                } while (!cursor.isFinished());
            }
            shared.keySet().retainAll(found.keySet());
            shared.putAll(found);
            found.forEach(this::remember);
        } catch (RedisException e) {
            failed(e);
        }
    }

    /** The cooldown a key {@code ratelimit:cooldown:{upstream}:model} holds, or null. */
    private static @Nullable Active fromKey(String key, @Nullable String value) {
        String prefix = "ratelimit:cooldown:{";
        int close = key.indexOf("}:", prefix.length());
        Long end = value == null ? null : parse(value);
        if (!key.startsWith(prefix) || close < 0 || end == null) {
            return null;
        }
        return new Active(key.substring(prefix.length(), close), key.substring(close + 2), Instant.ofEpochMilli(end));
    }

    private static String probeKey(String upstream, String model, long bucket) {
        return "ratelimit:cooldown-probe:{" + upstream + "}:" + model + ":" + bucket;
    }

    static String key(String upstream, String model) {
        return "ratelimit:cooldown:{" + upstream + "}:" + model;
    }

    /** When the model's cooldown ends, or {@code null} when it is not cooling down. */
    @Nullable
    Instant until(String upstream, String model) {
        long now = clock.millis();
        String key = key(upstream, model);
        Active announced = shared.get(key);
        if (announced != null && announced.until().toEpochMilli() > now) {
            return announced.until();
        }
        Active active = local.get(key);
        if (active == null || active.until().toEpochMilli() <= now) {
            return null;
        }
        return active.until();
    }

    /**
     * Whether this request may go through as the interval's one probe: true for the first caller
     * in each interval (counted from the epoch on the gateway's clock), of all processes on Redis.
     */
    boolean tryProbe(String upstream, String model, Duration interval) {
        long bucket = Math.floorDiv(clock.millis(), interval.toMillis());
        String key = key(upstream, model);
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands != null) {
            try {
                String set = commands.set(
                        probeKey(upstream, model, bucket),
                        "1",
                        SetArgs.Builder.nx().px(2 * interval.toMillis()));
                return "OK".equals(set);
            } catch (RedisException e) {
                failed(e);
            }
        }
        Long before = probes.get(key);
        if (before != null && before >= bucket) {
            return false;
        }
        return before == null ? probes.putIfAbsent(key, bucket) == null : probes.replace(key, before, bucket);
    }

    /**
     * Starts (or moves) a model's cooldown to end at {@code until} and counts it; the interval it
     * starts in has had its probe (the answer that started it), so the first probe comes in the next.
     */
    void start(String upstream, String model, Instant until, Duration probeInterval) {
        long now = clock.millis();
        long end = Math.min(until.toEpochMilli(), now + LONGEST.toMillis());
        if (end <= now) {
            return;
        }
        String key = key(upstream, model);
        Active active = new Active(upstream, model, Instant.ofEpochMilli(end));
        local.put(key, active);
        remember(key, active);
        long bucket = Math.floorDiv(now, probeInterval.toMillis());
        probes.merge(key, bucket, Math::max);
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands != null) {
            try {
                commands.set(key, Long.toString(end), SetArgs.Builder.px(end - now));
                commands.set(probeKey(upstream, model, bucket), "1", SetArgs.Builder.px(2 * probeInterval.toMillis()));
                commands.publish(CHANNEL, upstream + " " + model + " " + end);
            } catch (RedisException e) {
                failed(e);
            }
        }
        Counter.builder("gateway.upstream.cooldowns")
                .description("Cooldowns started because an upstream said a model is out (429, 529, or none left)")
                .tag("upstream", upstream)
                .tag("model", model)
                .register(registry)
                .increment();
        LOG.log(
                System.Logger.Level.INFO,
                "Upstream {0} asked to slow down for model {1}: its requests get 429 until {2}",
                upstream,
                model,
                active.until());
    }

    /**
     * Claims {@code key} for {@code ttlMillis} among every process sharing this Redis ({@code SET NX
     * PX}), for what must happen once across them (a budget alert); without Redis, or while it
     * cannot be reached, this process claims it for itself.
     *
     * @return whether this process holds the claim
     */
    boolean claim(String key, long ttlMillis) {
        StatefulConnection<String, String> connection = redis == null ? null : redis.connection();
        if (connection == null) {
            return true;
        }
        try {
            return "OK"
                    .equals(RedisLink.commands(connection)
                            .set(key, "1", SetArgs.Builder.nx().px(ttlMillis)));
        } catch (RedisException e) {
            failed(e);
            return true;
        }
    }

    /** Ends a model's cooldown: a probe came back with an answer. */
    void end(String upstream, String model) {
        String key = key(upstream, model);
        local.remove(key);
        shared.remove(key);
        known.remove(key);
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands != null) {
            try {
                commands.del(key);
                commands.publish(CHANNEL, upstream + " " + model + " 0");
            } catch (RedisException e) {
                failed(e);
            }
        }
    }

    /** The cooldowns in force among the models this process has seen cool down, soonest end first. */
    List<Active> active() {
        List<Active> active = new ArrayList<>();
        for (Active candidate : List.copyOf(known.values())) {
            Instant until = until(candidate.upstream(), candidate.model());
            if (until != null) {
                active.add(new Active(candidate.upstream(), candidate.model(), until));
            }
        }
        active.sort((a, b) -> a.until().compareTo(b.until()));
        return active;
    }

    Clock clock() {
        return clock;
    }

    private void remember(String key, Active active) {
        if (known.size() < KNOWN_PAIRS || known.containsKey(key)) {
            known.put(key, active);
        }
    }

    private static @Nullable Long parse(String value) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private void failed(RedisException e) {
        if (redis != null) {
            redis.failed(e);
        }
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }
}
