package dev.ratelimit.redis.jedis8;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

class Jedis8OnClassPathTest {

    @Test
    @DisplayName("the adapter's tests in this module run against Jedis 8")
    void jedisEightIsTheDriver() {
        String jar = UnifiedJedis.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toString();
        assertThat(jar).contains("jedis-8.");
    }
}
