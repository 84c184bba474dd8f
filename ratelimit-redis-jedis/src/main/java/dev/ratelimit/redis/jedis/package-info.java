/**
 * The Redis store over Jedis: {@link dev.ratelimit.redis.jedis.JedisWindowStore} builds a {@link
 * dev.ratelimit.core.WindowStore} from a {@code UnifiedJedis} such as {@code RedisClient} or {@code
 * RedisClusterClient}.
 */
@NullMarked
package dev.ratelimit.redis.jedis;

import org.jspecify.annotations.NullMarked;
