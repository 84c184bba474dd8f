package dev.ratelimit.springboot.lines;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.testsupport.redis.RedisServer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * On a Jedis without {@code RedisClient} (Spring Boot 4.0's 7.0.0) the starter's Jedis store refuses to start,
 * naming the Jedis found and the version to set; {@link JedisLineTest} runs, in this module's second test run, on
 * that version with Spring Data Redis's {@code JedisConnectionFactory}.
 */
class JedisWithoutRedisClientTest {

    @Test
    @DisplayName("the Jedis store's startup message names the Jedis found and 7.4.1")
    void refusesNamingTheVersion() {
        try (RedisServer redis = RedisServer.start()) {
            assertThatThrownBy(() -> new SpringApplicationBuilder(LineApp.class)
                            .properties(
                                    "server.port=0",
                                    "spring.data.redis.host=" + redis.host(),
                                    "spring.data.redis.port=" + redis.port(),
                                    "spring.data.redis.client-type=jedis",
                                    "ratelimit.store=jedis")
                            .run()
                            .close())
                    .rootCause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Jedis 7.4 or later")
                    .hasMessageContaining("found Jedis " + System.getProperty("line.jedis"))
                    .hasMessageContaining("7.4.1");
        }
    }
}
