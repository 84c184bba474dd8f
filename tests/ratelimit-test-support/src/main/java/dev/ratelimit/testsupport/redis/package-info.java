/**
 * Real Redis for this repository's tests and benchmarks, with nothing but the JDK: {@link
 * dev.ratelimit.testsupport.redis.RedisServer} starts a private {@code redis-server} process, {@link
 * dev.ratelimit.testsupport.redis.RedisCluster} a three-master cluster (with a replica each if
 * asked), {@link dev.ratelimit.testsupport.redis.RedisSentinel} a primary, its replica and a
 * Sentinel, {@link dev.ratelimit.testsupport.redis.RedisTls} certificates for a TLS port, and {@link
 * dev.ratelimit.testsupport.redis.RespClient} speaks just enough RESP to inspect them; {@link
 * dev.ratelimit.testsupport.redis.RedisServerExtension} runs either for a JUnit 5 test class or
 * test. The binaries are taken from the {@code PATH}, or from the {@code REDIS_SERVER} and {@code
 * REDIS_CLI} environment variables. Not published: the conformance kit third parties use is {@code
 * ratelimit-test-kit}.
 */
@NullMarked
package dev.ratelimit.testsupport.redis;

import org.jspecify.annotations.NullMarked;
