/**
 * The pure domain of ratelimit: the {@link dev.ratelimit.core.WindowStore} port that adapters
 * implement, and {@link dev.ratelimit.core.SlidingWindowRateLimiter}, which validates arguments,
 * evaluates windows shortest first and all or nothing (one store call, or one per scope on a store
 * that cannot evaluate several scopes atomically), and adds the kill switch, fail-open and metrics.
 */
@NullMarked
package dev.ratelimit.core;

import org.jspecify.annotations.NullMarked;
