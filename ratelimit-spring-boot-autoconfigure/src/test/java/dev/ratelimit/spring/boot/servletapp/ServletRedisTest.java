package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.Scenarios;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The servlet application on a private redis-server, through the Lettuce client Spring Boot created. */
@SpringBootTest(classes = ServletTestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class ServletRedisTest extends Scenarios {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("spring.data.redis.host", () -> REDIS.get().host());
        registry.add("spring.data.redis.port", () -> REDIS.get().port());
    }

    @Override
    protected String expectedStoreType() {
        return "lettuce";
    }
}
