/**
 * What the Redis stores share with applications that keep keys of their own on the same Redis: the
 * codec of names in keys ({@link dev.ratelimit.redis.RedisKeyCodec}).
 */
@NullMarked
package dev.ratelimit.redis;

import org.jspecify.annotations.NullMarked;
