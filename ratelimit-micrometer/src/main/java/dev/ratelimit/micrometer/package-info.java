/**
 * The limiter's metrics as Micrometer meters: {@link dev.ratelimit.micrometer.MicrometerLimiterMetrics}
 * records what the core reports through {@link dev.ratelimit.core.LimiterMetrics} in a {@code
 * MeterRegistry}, so that only an application that wants Micrometer has it.
 */
@NullMarked
package dev.ratelimit.micrometer;

import org.jspecify.annotations.NullMarked;
