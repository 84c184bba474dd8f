/**
 * The Redis the gateway keeps its budgets and shared state on, and the store the limiter uses.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.store;

import org.jspecify.annotations.NullMarked;
