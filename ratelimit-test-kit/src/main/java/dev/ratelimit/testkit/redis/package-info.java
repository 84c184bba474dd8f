/**
 * Real Redis for tests, with nothing but the JDK: {@link dev.ratelimit.testkit.redis.RedisServer}
 * starts a private {@code redis-server} process, {@link dev.ratelimit.testkit.redis.RedisCluster} a
 * three-master cluster, and {@link dev.ratelimit.testkit.redis.RespClient} speaks just enough RESP
 * to inspect them. The binaries are taken from the {@code PATH}, or from the {@code REDIS_SERVER}
 * and {@code REDIS_CLI} environment variables.
 */
@NullMarked
package dev.ratelimit.testkit.redis;

import org.jspecify.annotations.NullMarked;
