/**
 * The API listener's servlets and filters: keys, the metered pipeline, the pass-through paths, the access log and the connection limit.
 *
 * <p>Not API: part of the gateway process; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway.web;

import org.jspecify.annotations.NullMarked;
