package dev.ratelimit.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/** A thread-safe clock that moves only when told to, so tests move time without sleeping. */
public final class MutableClock extends Clock {

    private final AtomicLong millis;

    private MutableClock(long millis) {
        this.millis = new AtomicLong(millis);
    }

    /**
     * Creates a clock showing {@code instant}.
     *
     * @param instant the starting time
     * @return the clock
     */
    public static MutableClock at(Instant instant) {
        return new MutableClock(
                Objects.requireNonNull(instant, "instant must not be null").toEpochMilli());
    }

    /**
     * Moves the clock forward (or back, for a negative amount).
     *
     * @param amount how far to move
     * @return this clock
     */
    public MutableClock advance(Duration amount) {
        millis.addAndGet(
                Objects.requireNonNull(amount, "amount must not be null").toMillis());
        return this;
    }

    /**
     * Moves the clock forward by {@code amount} milliseconds.
     *
     * @param amount milliseconds to move
     * @return this clock
     */
    public MutableClock advanceMillis(long amount) {
        millis.addAndGet(amount);
        return this;
    }

    /**
     * Sets the clock to {@code instant}.
     *
     * @param instant the new time
     * @return this clock
     */
    public MutableClock set(Instant instant) {
        millis.set(Objects.requireNonNull(instant, "instant must not be null").toEpochMilli());
        return this;
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("MutableClock is always UTC");
    }

    @Override
    public String toString() {
        return "MutableClock[" + instant() + "]";
    }
}
