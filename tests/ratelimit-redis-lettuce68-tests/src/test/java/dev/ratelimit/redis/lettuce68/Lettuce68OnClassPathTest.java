package dev.ratelimit.redis.lettuce68;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class Lettuce68OnClassPathTest {

    @Test
    @DisplayName("the adapter's tests in this module run against Lettuce 6.8")
    void lettuceSixEightIsTheDriver() {
        String jar = RedisClient.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toString();
        assertThat(jar).contains("lettuce-core-6.8.");
    }
}
