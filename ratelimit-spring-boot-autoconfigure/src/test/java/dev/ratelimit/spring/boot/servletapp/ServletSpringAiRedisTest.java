package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.SpringAiScenarios;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The Spring MVC application with Spring AI on a private redis-server, through Lettuce. */
@SpringBootTest(classes = ServletTestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class ServletSpringAiRedisTest extends SpringAiScenarios {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", () -> REDIS.get().host());
        registry.add("spring.data.redis.port", () -> REDIS.get().port());
    }
}
