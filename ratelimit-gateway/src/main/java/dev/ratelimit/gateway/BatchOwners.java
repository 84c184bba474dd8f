package dev.ratelimit.gateway;

import io.lettuce.core.RedisException;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Which tenant owns each batch and each uploaded file: on Redis (one hash, {@code
 * <admin.prefix>:batch-owners}), so any gateway on it can answer who may read, cancel or download
 * one; in this process's memory without Redis. A lookup Redis cannot answer is treated as not
 * owned (the caller hears 404, never another tenant's batch).
 */
final class BatchOwners implements AutoCloseable {

    /** The kind of an uploaded file (OpenAI's batch input). */
    static final String FILE = "file";

    /** The kind of a batch, of any provider (their ids never collide: {@code batch_...}, {@code msgbatch_...}). */
    static final String BATCH = "batch";

    private final @Nullable RedisLink redis;
    private final String hash;
    private final Map<String, String> local = new ConcurrentHashMap<>();

    /**
     * @param redis the gateway's Redis, or {@code null} for this process's memory
     * @param prefix the prefix of the hash ({@code admin.prefix})
     */
    BatchOwners(@Nullable RedisTarget redis, String prefix) {
        this.hash = prefix + ":batch-owners";
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
        RedisClusterCommands<String, String> commands = redis.commands();
        try {
            return commands != null && commands.hset(hash, field, tenant) != null;
        } catch (RedisException e) {
            redis.failed(e);
            return false;
        }
    }

    /** Tells whether {@code tenant} owns the object {@code id}; {@code false} when unknown or unreadable. */
    boolean owns(String kind, String id, String tenant) {
        String field = kind + ":" + id;
        if (redis == null) {
            return tenant.equals(local.get(field));
        }
        RedisClusterCommands<String, String> commands = redis.commands();
        try {
            return commands != null && tenant.equals(commands.hget(hash, field));
        } catch (RedisException e) {
            redis.failed(e);
            return false;
        }
    }

    @Override
    public void close() {
        if (redis != null) {
            redis.close();
        }
    }
}
