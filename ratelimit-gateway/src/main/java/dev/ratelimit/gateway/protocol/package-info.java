/** Not API: part of the gateway process; every type here may change. */
@NullMarked
package dev.ratelimit.gateway.protocol;

import org.jspecify.annotations.NullMarked;
