/**
 * Code shared by the Redis adapters: the sliding-window Lua script, the key space, the script's
 * arguments and replies. Not an API: nothing here may appear in a public signature
 * of an adapter, and it may change in any release.
 */
@NullMarked
package dev.ratelimit.redis.internal;

import org.jspecify.annotations.NullMarked;
