package dev.ratelimit.springboot.lines;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.data.redis.core.StringRedisTemplate;
import redis.clients.jedis.UnifiedJedis;

/**
 * The jars these tests run on are the Boot line's: the versions its BOM manages, which the module's pom passes as
 * system properties ({@code line.spring-boot}, {@code line.lettuce}, {@code line.jedis}, {@code line.spring-data-redis}).
 */
class DriversOnClassPathTest {

    @Test
    @DisplayName("Spring Boot, Spring Data Redis, Lettuce and Jedis are the line's own versions")
    void theLinesOwnDrivers() {
        assertThat(jar(SpringApplication.class)).contains("/spring-boot-" + expected("line.spring-boot") + ".jar");
        assertThat(jar(StringRedisTemplate.class))
                .contains("/spring-data-redis-" + expected("line.spring-data-redis") + ".jar");
        assertThat(jar(RedisClient.class)).contains("/lettuce-core-" + expected("line.lettuce") + ".jar");
        assertThat(jar(UnifiedJedis.class)).contains("/jedis-" + expected("line.jedis") + ".jar");
    }

    private static String expected(String property) {
        String version = System.getProperty(property);
        assertThat(version).as(property).isNotBlank();
        return version;
    }

    private static String jar(Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation().toString();
    }
}
