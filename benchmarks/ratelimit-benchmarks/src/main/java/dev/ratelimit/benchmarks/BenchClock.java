package dev.ratelimit.benchmarks;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the benchmark moves by hand (the limiters' and the in-memory store's injected time). */
final class BenchClock extends Clock {

    private final AtomicLong millis;

    BenchClock(long startMillis) {
        this.millis = new AtomicLong(startMillis);
    }

    void advance(long delta) {
        millis.addAndGet(delta);
    }

    void set(long value) {
        millis.set(value);
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
        return this;
    }
}
