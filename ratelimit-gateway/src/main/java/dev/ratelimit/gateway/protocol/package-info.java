/**
 * What every API the gateway speaks shares: the metered endpoint's contract, the streamed events' reader, the error shapes.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.protocol;

import org.jspecify.annotations.NullMarked;
