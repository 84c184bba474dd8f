/**
 * The upstreams: routing by model, cooldowns, the HTTP client and the relays that move an answer to its client with no thread per stream.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.upstream;

import org.jspecify.annotations.NullMarked;
