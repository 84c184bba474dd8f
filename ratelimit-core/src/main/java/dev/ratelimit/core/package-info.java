/**
 * The pure domain of ratelimit: the {@link dev.ratelimit.core.WindowStore} port that adapters
 * implement, and {@link dev.ratelimit.core.SlidingWindowRateLimiter}, which validates arguments,
 * evaluates windows shortest first and all or nothing through one store call, and adds the kill
 * switch, fail-open and metrics.
 */
@NullMarked
package dev.ratelimit.core;

import org.jspecify.annotations.NullMarked;
