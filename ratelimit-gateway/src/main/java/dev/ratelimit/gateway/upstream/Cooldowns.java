package dev.ratelimit.gateway.upstream;

import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisLink;
import dev.ratelimit.gateway.store.RedisTarget;
import io.lettuce.core.ExpireArgs;
import io.lettuce.core.RedisException;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The models an upstream told the gateway to stop sending for a while (a 429 or 529 with {@code
 * retry-after}, or rate-limit headers saying none is left): until then their requests are answered
 * 429 by the gateway itself, except one probe per interval, whose success ends the cooldown early.
 *
 * <p>In memory for one process; on Redis ({@code REDIS_URL} or {@code REDIS_CLUSTER_URL}) shared by
 * every gateway process: one hash per upstream, {@code <prefix>:cooldowns:{<upstream>}} (names in the
 * library's key codec: {@link GatewayKeys}), whose fields
 * are the cooling models (any name) and their values the ends as epoch milliseconds; the hash expires
 * with its latest end, and a field whose end has passed is read as no cooldown. A change is announced
 * on the channel {@code <prefix>:cooldowns} (a process subscribes at start and reads its upstreams' hashes again
 * whenever its subscription connects, so it knows the cooldowns set while it was away: one {@code
 * HGETALL} per upstream, never a scan of the keyspace), and one key per probe interval, set with NX, so that of all
 * the processes exactly one lets the interval's probe through. A request asks only this process's
 * memory whether its model is cooling down: no Redis command on the way of a request while no
 * cooldown is in force. Another process learns of a new cooldown when the announcement arrives
 * (a Redis round trip later); a request it forwards meanwhile can still meet the upstream's 429. Times come from the gateway's clock
 * (the processes' clocks agree to NTP's precision, far below a retry-after). While Redis cannot be
 * reached the process falls back to what it knows itself, and logs it at most every 10 seconds.
 *
 * <p>On a Redis Cluster the hashes spread over the masters by their upstream's hash tag, each read and
 * written on its own master, and announcements go through the cluster's pub/sub, which every node
 * relays to its subscribers.
 */
public final class Cooldowns implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Cooldowns.class.getName());
    /** The longest cooldown an upstream's header can set; a probe ends a wrong one sooner anyway. */
    static final Duration LONGEST = Duration.ofHours(1);
    /** The most (upstream, model) pairs remembered for the status page. */
    private static final int KNOWN_PAIRS = 1_000;

    /** One model cooling down, for the status page. */
    public record Active(String upstream, String model, Instant until) {}

    private final Clock clock;
    private final MeterRegistry registry;
    private final @Nullable RedisLink redis;
    private final GatewayKeys keys;
    /** The cooldowns in force on Redis, as announced there or read at (re)subscription. */
    private final Map<String, Active> shared = new ConcurrentHashMap<>();

    private final Map<String, Active> local = new ConcurrentHashMap<>();
    private final Map<String, Long> probes = new ConcurrentHashMap<>();
    private final Map<String, Active> known = new ConcurrentHashMap<>();
    /** The upstreams whose hashes are read: the configured ones, and any named in an announcement. */
    private final Set<String> upstreams = ConcurrentHashMap.newKeySet();

    /**
     * @param redis the store's Redis server or cluster, or {@code null} for this process's memory
     * @param keys the names of the hashes, probe keys and channel ({@code admin.prefix})
     * @param upstreams the configured upstreams' names: whose hashes are read when the subscription
     *     connects
     */
    public Cooldowns(
            Clock clock,
            @Nullable RedisTarget redis,
            GatewayKeys keys,
            MeterRegistry registry,
            Collection<String> upstreams) {
        this.clock = clock;
        this.keys = keys;
        this.registry = registry;
        this.upstreams.addAll(upstreams);
        if (redis == null) {
            this.redis = null;
        } else {
            RedisLink link = new RedisLink(redis, "Upstream cooldowns", "this process goes by what it knows itself");
            this.redis = link;
            // the keys are read again each time the subscription connects: announcements made meanwhile were missed
            link.subscribe(keys.cooldownChannel(), this::announced, this::readAll);
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
        upstreams.add(upstream);
        String key = key(upstream, model);
        if (end <= clock.millis()) {
            shared.remove(key);
        } else {
            Active active = new Active(upstream, model, Instant.ofEpochMilli(end));
            shared.put(key, active);
            remember(key, active);
        }
    }

    /** Reads the hash of every upstream this process knows into {@link #shared}. */
    private void readAll() {
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands == null) {
            return;
        }
        try {
            long now = clock.millis();
            Map<String, Active> found = new HashMap<>();
            for (String upstream : List.copyOf(upstreams)) {
                commands.hgetall(hashKey(upstream)).forEach((model, value) -> {
                    Long end = parse(value);
                    if (end != null && end > now) {
                        found.put(key(upstream, model), new Active(upstream, model, Instant.ofEpochMilli(end)));
                    }
                });
            }
            shared.keySet().retainAll(found.keySet());
            shared.putAll(found);
            found.forEach(this::remember);
        } catch (RedisException e) {
            failed(e);
        }
    }

    /** The hash of an upstream's cooling models: field the model, value the end in epoch milliseconds. */
    private String hashKey(String upstream) {
        return keys.cooldowns(upstream);
    }

    private String probeKey(String upstream, String model, long bucket) {
        return keys.cooldownProbe(upstream, model, bucket);
    }

    /** The key of an (upstream, model) pair in this process's maps. */
    private static String key(String upstream, String model) {
        return upstream + " " + model; // an upstream's name has no space
    }

    /**
     * When the model's cooldown ends, or {@code null} when it is not cooling down: the later of what
     * Redis announced and what this process started itself (its own announcement may not have come
     * back yet, so an end it just moved later is not undone by the one announced before).
     */
    @Nullable
    public Instant until(String upstream, String model) {
        long now = clock.millis();
        String key = key(upstream, model);
        Active announced = shared.get(key);
        Active active = local.get(key);
        long end = Math.max(
                announced == null ? 0 : announced.until().toEpochMilli(),
                active == null ? 0 : active.until().toEpochMilli());
        return end > now ? Instant.ofEpochMilli(end) : null;
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
    public void start(String upstream, String model, Instant until, Duration probeInterval) {
        long now = clock.millis();
        long end = Math.min(until.toEpochMilli(), now + LONGEST.toMillis());
        if (end <= now) {
            return;
        }
        String key = key(upstream, model);
        upstreams.add(upstream);
        Active active = new Active(upstream, model, Instant.ofEpochMilli(end));
        local.put(key, active);
        remember(key, active);
        long bucket = Math.floorDiv(now, probeInterval.toMillis());
        probes.merge(key, bucket, Math::max);
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands != null) {
            try {
                String hash = hashKey(upstream);
                commands.hset(hash, model, Long.toString(end));
                // the hash lives as long as its latest end: set when it has no expiry, else only lengthened
                commands.pexpire(hash, end - now, ExpireArgs.Builder.nx());
                commands.pexpire(hash, end - now, ExpireArgs.Builder.gt());
                commands.set(probeKey(upstream, model, bucket), "1", SetArgs.Builder.px(2 * probeInterval.toMillis()));
                commands.publish(keys.cooldownChannel(), upstream + " " + model + " " + end);
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
    public boolean claim(String key, long ttlMillis) {
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands == null) {
            return true;
        }
        try {
            return "OK".equals(commands.set(key, "1", SetArgs.Builder.nx().px(ttlMillis)));
        } catch (RedisException e) {
            failed(e);
            return true;
        }
    }

    /** Ends a model's cooldown: a probe came back with an answer. */
    public void end(String upstream, String model) {
        String key = key(upstream, model);
        local.remove(key);
        shared.remove(key);
        known.remove(key);
        RedisClusterCommands<String, String> commands = redis == null ? null : redis.commands();
        if (commands != null) {
            try {
                commands.hdel(hashKey(upstream), model);
                commands.publish(keys.cooldownChannel(), upstream + " " + model + " 0");
            } catch (RedisException e) {
                failed(e);
            }
        }
    }

    /** The cooldowns in force among the models this process has seen cool down, soonest end first. */
    public List<Active> active() {
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

    public Clock clock() {
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
