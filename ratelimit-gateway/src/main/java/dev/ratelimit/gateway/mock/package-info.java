/**
 * The built-in mock model the gateway serves when no upstream is configured.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.mock;

import org.jspecify.annotations.NullMarked;
