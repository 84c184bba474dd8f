package dev.ratelimit.spring.boot.reactiveapp;

import dev.ratelimit.spring.boot.SpringAiScenarios;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The WebFlux application with Spring AI on a private redis-server, through Lettuce. */
@SpringBootTest(
        classes = ReactiveTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.main.web-application-type=reactive")
@DirtiesContext
class ReactiveSpringAiRedisTest extends SpringAiScenarios {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", () -> REDIS.get().host());
        registry.add("spring.data.redis.port", () -> REDIS.get().port());
    }
}
