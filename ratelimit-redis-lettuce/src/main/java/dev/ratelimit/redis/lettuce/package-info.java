/**
 * The Redis store over Lettuce: {@link dev.ratelimit.redis.lettuce.LettuceWindowStore} builds a
 * {@link dev.ratelimit.core.WindowStore} from a {@code RedisClient} or a {@code RedisClusterClient}.
 */
@NullMarked
package dev.ratelimit.redis.lettuce;

import org.jspecify.annotations.NullMarked;
