package dev.ratelimit.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A WARNING that is logged at most once per interval, however many threads hit the failure it
 * reports: a store that fails on every request must be loud in the log, not flood it. The limiter's
 * warning of its failing store.
 */
final class ThrottledWarning {

    private final System.Logger logger;
    private final long intervalNanos;
    private final AtomicLong lastNanos;

    /**
     * Creates a warning whose first call logs.
     *
     * @param logger where to log
     * @param interval the least time between two lines; zero logs every call
     */
    ThrottledWarning(System.Logger logger, Duration interval) {
        this.logger = Objects.requireNonNull(logger, "logger must not be null");
        if (Objects.requireNonNull(interval, "interval must not be null").isNegative()) {
            throw new IllegalArgumentException("interval must not be negative, was " + interval);
        }
        this.intervalNanos = interval.toNanos();
        this.lastNanos = new AtomicLong(System.nanoTime() - intervalNanos);
    }

    /**
     * Logs at WARNING unless a line was logged less than the interval ago; of threads calling at
     * once, one logs.
     *
     * @param format the message, in {@link java.text.MessageFormat} syntax
     * @param params its parameters
     * @return whether this call logged
     */
    boolean warn(String format, Object... params) {
        long now = System.nanoTime();
        long last = lastNanos.get();
        if (now - last < intervalNanos || !lastNanos.compareAndSet(last, now)) {
            return false;
        }
        logger.log(System.Logger.Level.WARNING, format, params);
        return true;
    }
}
