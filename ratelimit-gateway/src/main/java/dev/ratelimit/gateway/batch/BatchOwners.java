package dev.ratelimit.gateway.batch;

import dev.ratelimit.gateway.store.GatewayKeys;
import dev.ratelimit.gateway.store.RedisLink;
import dev.ratelimit.gateway.store.RedisTarget;
import io.lettuce.core.RedisException;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Which tenant owns each batch and each uploaded file, and what settles each batch not settled yet:
 * on Redis (the hashes {@code <admin.prefix>:batch-owners}, {@code
 * <admin.prefix>:batch-reservations} and {@code <admin.prefix>:batch-settling}, a key {@code
 * <admin.prefix>:batch-poll:<id>} while a poller has a batch and {@code
 * <admin.prefix>:batch-settle-guard:<id>} after a settlement was first attempted), so any gateway on it can answer who may read, cancel or download one and
 * settle it; in this process's memory without Redis. A lookup Redis cannot answer is treated as not
 * owned (the caller hears 404, never another tenant's batch) and as nothing to settle (the
 * reservation stays charged until it is asked again).
 */
public final class BatchOwners implements AutoCloseable {

    /** The kind of an uploaded file (OpenAI's batch input). */
    static final String FILE = "file";

    /** The kind of a batch, of any provider (their ids never collide: {@code batch_...}, {@code msgbatch_...}). */
    static final String BATCH = "batch";

    private final @Nullable RedisLink redis;
    private final GatewayKeys keys;
    private final String hash;
    private final String reservations;
    private final String settling;
    private final Map<String, String> local = new ConcurrentHashMap<>();
    private final Map<String, String> localReservations = new ConcurrentHashMap<>();
    private final Set<String> localSettling = ConcurrentHashMap.newKeySet();

    /**
     * @param redis the gateway's Redis, or {@code null} for this process's memory
     * @param keys the names of the gateway's keys ({@code admin.prefix})
     */
    public BatchOwners(@Nullable RedisTarget redis, GatewayKeys keys) {
        this.keys = keys;
        this.hash = keys.batchOwners();
        this.reservations = keys.batchReservations();
        this.settling = keys.batchSettling();
        this.redis = redis == null
                ? null
                : new RedisLink(redis, "Batch owners", "batches and files answer 404 until it is back");
    }

    /**
     * Records that {@code tenant} owns the object {@code id} (a batch or file id, with its kind).
     *
     * @return whether it is recorded; {@code false} while Redis cannot be reached (then nobody can
     *     read the object through the gateway: it fails closed)
     */
    boolean own(String kind, String id, String tenant) {
        String field = kind + ":" + id;
        if (redis == null) {
            local.put(field, tenant);
            return true;
        }
        return command(redis, commands -> commands.hset(hash, field, tenant) != null, false);
    }

    /** Tells whether {@code tenant} owns the object {@code id}; {@code false} when unknown or unreadable. */
    boolean owns(String kind, String id, String tenant) {
        String field = kind + ":" + id;
        if (redis == null) {
            return tenant.equals(local.get(field));
        }
        return command(redis, commands -> tenant.equals(commands.hget(hash, field)), false);
    }

    /**
     * Records what settles the batch {@code id} (its reservation's receipt and charge, as text).
     *
     * @return whether it is recorded; {@code false} while Redis cannot be reached (the reservation
     *     then stays charged until its windows pass: more counted, never less)
     */
    boolean hold(String id, String record) {
        if (redis == null) {
            localReservations.put(id, record);
            return true;
        }
        return command(redis, commands -> commands.hset(reservations, id, record) != null, false);
    }

    /** What settles the batch {@code id}, or {@code null} when it is settled, unknown or unreadable. */
    @Nullable
    String held(String id) {
        if (redis == null) {
            return localReservations.get(id);
        }
        Optional<String> record =
                command(redis, commands -> Optional.ofNullable(commands.hget(reservations, id)), Optional.empty());
        return record.orElse(null);
    }

    /** Every batch not settled yet, by id, with what settles it; none while Redis cannot be reached. */
    Map<String, String> held() {
        if (redis == null) {
            return Map.copyOf(localReservations);
        }
        return command(redis, commands -> commands.hgetall(reservations), Map.of());
    }

    /**
     * Forgets the batch {@code id}'s record and its settlement attempt once it is settled; a failure
     * leaves it to be settled again, which the store ignores within the guard ({@link #attempt}).
     */
    void release(String id) {
        if (redis == null) {
            localReservations.remove(id);
            localSettling.remove(id);
            return;
        }
        command(redis, commands -> commands.hdel(reservations, id) + commands.hdel(settling, id), 0L);
    }

    /** Whether a settlement of the batch {@code id} may be attempted now, and whether one was before. */
    enum Attempt {
        /** None was attempted: this one may go ahead, and is now recorded with its guard. */
        FIRST,
        /** One was, within the guard: the store ignores a settlement it applied already, so it may go ahead. */
        AGAIN,
        /**
         * One was, longer ago than the guard: it may have been applied, and the store no longer
         * remembers it, so settling again might give the refund twice; the batch is left as it is.
         */
        TOO_LATE,
        /** The store could not tell: nothing is settled now. */
        UNKNOWN
    }

    /**
     * Records that a settlement of the batch {@code id} is attempted, with a guard ({@code <prefix>:
     * batch-settle-guard:<id>}, {@code SET NX PX}) that lives {@code guard} from the first attempt,
     * shorter than the store's memory of the settlements it applied; says whether this attempt may
     * settle.
     */
    Attempt attempt(String id, Duration guard) {
        if (redis == null) {
            return localSettling.add(id) ? Attempt.FIRST : Attempt.AGAIN; // one process, one store call
        }
        Optional<Attempt> attempt = command(
                redis,
                commands -> {
                    if (Boolean.TRUE.equals(commands.hexists(settling, id))) {
                        return Optional.of(
                                commands.exists(keys.batchSettleGuard(id)) > 0 ? Attempt.AGAIN : Attempt.TOO_LATE);
                    }
                    // the guard first: an attempt recorded without its guard would be taken for a late one
                    commands.set(
                            keys.batchSettleGuard(id), "1", SetArgs.Builder.nx().px(Math.max(1, guard.toMillis())));
                    commands.hset(settling, id, "1");
                    return Optional.of(Attempt.FIRST);
                },
                Optional.empty());
        return attempt.orElse(Attempt.UNKNOWN);
    }

    /**
     * Claims the batch {@code id} for one poll across every gateway on the store, for {@code
     * interval} ({@code SET NX PX}): at most one poller asks the upstream about a batch per interval.
     *
     * @return whether this process has it; always {@code true} in memory, {@code false} while Redis
     *     cannot be reached
     */
    boolean claim(String id, Duration interval) {
        if (redis == null) {
            return true;
        }
        return command(
                redis,
                commands -> "OK"
                        .equals(commands.set(
                                keys.batchPoll(id), "1", SetArgs.Builder.nx().px(Math.max(1, interval.toMillis())))),
                false);
    }

    /** Runs one command on Redis; {@code otherwise} when it is not connected or the command fails. */
    private static <T> T command(
            RedisLink redis, Function<RedisClusterCommands<String, String>, @Nullable T> command, T otherwise) {
        RedisClusterCommands<String, String> commands = redis.commands();
        if (commands == null) {
            return otherwise;
        }
        try {
            T answer = command.apply(commands);
            return answer == null ? otherwise : answer;
        } catch (RedisException e) {
            redis.failed(e);
            return otherwise;
        }
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }
}
