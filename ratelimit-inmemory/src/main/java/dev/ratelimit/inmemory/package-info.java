/**
 * The embedded {@link dev.ratelimit.core.WindowStore}: an exact sliding-window log per user in a
 * Caffeine cache, for demos, unit tests and single-node services.
 */
@NullMarked
package dev.ratelimit.inmemory;

import org.jspecify.annotations.NullMarked;
