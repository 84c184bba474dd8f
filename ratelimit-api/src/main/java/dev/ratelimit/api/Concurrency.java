package dev.ratelimit.api;

import java.time.Duration;

/**
 * A cap on the reservations of one user held at once, taken with a reservation: like a bulkhead's
 * maximum concurrent calls, but shared by every process on the limiter's store and taken in the
 * same atomic store step as the reservation's windows.
 *
 * <p>A reservation made with a concurrency cap holds a lease (a slot) from the moment it is
 * admitted until it is settled ({@link Reservation#commit} or {@link Reservation#cancel} releases
 * it in the same store call). It is admitted only when every window has room and fewer than
 * {@link #maxConcurrent()} of the user's leases are held: a window's refusal takes no slot, and a
 * refusal by the cap ({@link Reservation#concurrencyLimited()}) charges no window. A lease whose
 * holder dies without settling is dropped once {@link #lease()} passes without a {@linkplain
 * Reservation#renew() renewal}; holders that run longer renew it.
 *
 * @param maxConcurrent the most reservations of one user held at once; at least 1
 * @param lease how long a slot stays held without renewal; at least 1 ms
 */
public record Concurrency(int maxConcurrent, Duration lease) {

    /** The lease {@link #of(int)} gives: 30 seconds. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    /**
     * Validates the cap.
     *
     * @param maxConcurrent the most reservations of one user held at once; at least 1
     * @param lease how long a slot stays held without renewal; at least 1 ms
     * @throws NullPointerException if {@code lease} is {@code null}
     * @throws IllegalArgumentException if {@code maxConcurrent} or the lease is below its minimum
     */
    public Concurrency {
        Checks.notNull(lease, "lease");
        if (maxConcurrent < 1) {
            throw new IllegalArgumentException("maxConcurrent must be at least 1, was " + maxConcurrent);
        }
        if (lease.toMillis() < 1) {
            throw new IllegalArgumentException("lease must be at least 1 ms, was " + lease);
        }
    }

    /**
     * Creates a cap of {@code maxConcurrent} with the {@linkplain #DEFAULT_LEASE default lease}.
     *
     * @param maxConcurrent the most reservations of one user held at once
     * @return the cap
     */
    public static Concurrency of(int maxConcurrent) {
        return new Concurrency(maxConcurrent, DEFAULT_LEASE);
    }

    /**
     * Returns this cap with another lease.
     *
     * @param lease how long a slot stays held without renewal
     * @return the cap
     */
    public Concurrency withLease(Duration lease) {
        return new Concurrency(maxConcurrent, lease);
    }
}
