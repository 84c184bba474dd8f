/**
 * The public types of ratelimit: the {@link dev.ratelimit.api.RateLimiter} entry point, the
 * {@link dev.ratelimit.api.Window} and {@link dev.ratelimit.api.Tier} that describe limits, and
 * the {@link dev.ratelimit.api.Decision} a check returns.
 */
@NullMarked
package dev.ratelimit.api;

import org.jspecify.annotations.NullMarked;
