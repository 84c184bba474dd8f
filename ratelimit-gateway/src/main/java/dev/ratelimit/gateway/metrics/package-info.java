/**
 * The gateway's own meters, beside the limiter's.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.metrics;

import org.jspecify.annotations.NullMarked;
