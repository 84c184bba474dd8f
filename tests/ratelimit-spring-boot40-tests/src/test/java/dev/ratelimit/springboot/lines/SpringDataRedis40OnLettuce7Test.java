package dev.ratelimit.springboot.lines;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.testsupport.redis.RedisServer;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Why docs/spring-boot.md tells Boot 4.0 applications to keep Boot's Lettuce: run (in this module's third test run)
 * with Lettuce 7 in place of Boot 4.0's 6.8, the application's own {@code StringRedisTemplate.keys} fails.
 */
class SpringDataRedis40OnLettuce7Test {

    @Test
    @DisplayName("Spring Data Redis 4.0 on Lettuce 7: StringRedisTemplate.keys throws NoSuchMethodError")
    void keysFails() {
        assertThat(RedisClient.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toString())
                .contains("/lettuce-core-7.");
        try (RedisServer redis = RedisServer.start();
                ConfigurableApplicationContext context = new SpringApplicationBuilder(LineApp.class)
                        .properties(
                                "server.port=0",
                                "spring.data.redis.host=" + redis.host(),
                                "spring.data.redis.port=" + redis.port())
                        .run()) {
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            template.opsForValue().set("app:one", "1");
            assertThatThrownBy(() -> template.keys("app:*"))
                    .isInstanceOf(NoSuchMethodError.class)
                    .hasMessageContaining("io.lettuce.core.api.async.RedisKeyAsyncCommands.keys(java.lang.Object)");
        }
    }
}
