/** Not API: part of the gateway process; every type here may change. */
@NullMarked
package dev.ratelimit.gateway.store;

import org.jspecify.annotations.NullMarked;
