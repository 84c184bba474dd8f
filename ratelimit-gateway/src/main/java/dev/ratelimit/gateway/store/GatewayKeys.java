package dev.ratelimit.gateway.store;

import dev.ratelimit.redis.RedisKeyCodec;

/**
 * The names of every key and channel the gateway keeps on Redis beside the limiter's budgets, under
 * one prefix ({@code admin.prefix}, {@code ratelimit} by default), each name written through the
 * library's key codec ({@link RedisKeyCodec}): an upstream, model, budget or window of any name
 * (spaces, colons, braces, any Unicode) has keys of its own, in the hash slot its tag says.
 *
 * @param prefix the prefix, printable ASCII without spaces or braces
 */
public record GatewayKeys(String prefix) {

    /** The keys under the default prefix, {@code ratelimit}. */
    public static final GatewayKeys DEFAULT = new GatewayKeys("ratelimit");

    public GatewayKeys {
        RedisKeyCodec.checkPrefix(prefix, "prefix");
    }

    /** The hash of an upstream's cooling models: field the model's name, value the end in epoch ms. */
    public String cooldowns(String upstream) {
        return prefix + ":cooldowns:" + RedisKeyCodec.hashTag(upstream);
    }

    /** The key that one process of all sets to let a cooldown's probe of one interval through. */
    public String cooldownProbe(String upstream, String model, long interval) {
        return prefix + ":cooldown-probe:" + RedisKeyCodec.hashTag(upstream) + ":" + RedisKeyCodec.token(model) + ":"
                + interval;
    }

    /** The channel on which a process announces a cooldown it started or ended. */
    public String cooldownChannel() {
        return prefix + ":cooldowns";
    }

    /**
     * The key that one process of all sets to send an alert: of a budget (its level and name), a
     * window, a threshold and the window's period.
     */
    public String alert(String level, String name, String window, int threshold, long periodStart) {
        return prefix + ":alert:" + RedisKeyCodec.hashTag(level + ":" + name) + ":" + RedisKeyCodec.token(window) + ":"
                + threshold + ":" + periodStart;
    }

    /** The hash of the keys the admin API manages. */
    public String managedKeys() {
        return prefix + ":admin-keys";
    }

    /** The channel on which a change of a managed key is announced. */
    public String managedKeyChanges() {
        return managedKeys() + ":changes";
    }

    /** The hash of who owns each batch and uploaded file. */
    public String batchOwners() {
        return prefix + ":batch-owners";
    }

    /** The hash of the batches' reservations, by batch id. */
    public String batchReservations() {
        return prefix + ":batch-reservations";
    }

    /** The set of batches whose settlement is under way. */
    public String batchSettling() {
        return prefix + ":batch-settling";
    }

    /** The key of the process that polls a batch this interval. */
    public String batchPoll(String id) {
        return prefix + ":batch-poll:" + RedisKeyCodec.token(id);
    }

    /** The key set once a batch's settlement was first attempted. */
    public String batchSettleGuard(String id) {
        return prefix + ":batch-settle-guard:" + RedisKeyCodec.token(id);
    }
}
