/**
 * Anthropic's Messages API: requests, estimates and events.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.protocol.anthropic;

import org.jspecify.annotations.NullMarked;
