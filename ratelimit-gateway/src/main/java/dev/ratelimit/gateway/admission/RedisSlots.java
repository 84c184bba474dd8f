package dev.ratelimit.gateway.admission;

import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.gateway.store.RedisTarget;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Slots shared by every gateway process on one Redis server or Redis Cluster: leases in the
 * limiter's store, per tenant a sorted set of entry ids scored by the end of their lease (server
 * time), taken and released by the store's one script in the same call as the reservation and its
 * settlement. So a metered request on one server makes two round trips: reserve (with its slot)
 * before the first byte, settle (freeing it) after. On a cluster the lease set lies in the tenant's
 * slot and goes with the tenant's own scope, so a slot adds no round trip there either.
 *
 * <p>A held slot is renewed every third of its lease while its request runs; if the process dies,
 * renewals stop and the slot passes once its lease ends. While Redis cannot be reached, the limiter's
 * failure policy applies to the slot as to the windows: failing open, a request passes without a
 * slot; failing closed, it gets 503. A release that fails while Redis is away is lost with its
 * settlement: the slot passes when its lease ends. {@link #problem()} says why the store cannot be
 * used, and {@code gateway_slot_failures_total} counts the checks that found it so.
 */
public final class RedisSlots extends Slots.Leased {

    private final String where;
    private final Counter failures;

    /**
     * Holds nothing yet: slots live in the limiter's store.
     *
     * @param redis the Redis server or cluster, for the problems
     * @param lease how long a slot lives without renewal
     * @param failOpen the limiter's failure policy (it applies to slots too)
     * @param registry where {@code gateway.slot.failures} is counted
     */
    public RedisSlots(RedisTarget redis, Duration lease, boolean failOpen, MeterRegistry registry) {
        super(lease);
        this.where = (redis.cluster() ? "Redis cluster at " : "Redis at ") + redis.where();
        this.failures = Counter.builder("gateway.slot.failures")
                .description("Slot checks that failed because Redis could not be reached")
                .register(registry);
    }

    @Override
    public @Nullable String problem() {
        try {
            if (inFlightOrFail("~health") >= 0) {
                return null;
            }
            return where + " failed (not bound to a limiter)";
        } catch (RateLimiterUnavailableException e) {
            failures.increment();
            return where + " failed (" + e.getMessage() + ")";
        }
    }

    @Override
    public String description() {
        return "redis (leases in the limiter's store, " + lease().toMillis() + " ms lease)";
    }
}
