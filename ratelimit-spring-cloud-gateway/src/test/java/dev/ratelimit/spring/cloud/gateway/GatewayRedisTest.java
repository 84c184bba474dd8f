package dev.ratelimit.spring.cloud.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.gateway.ApiGatewayApplication;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.gateway.filter.ratelimit.RedisRateLimiter;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The gateway application on a private redis-server, through the Lettuce client Spring Boot
 * created. The gateway creates its own {@link RedisRateLimiter} too; the filter uses ours.
 */
@SpringBootTest(
        classes = ApiGatewayApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = GatewayApplication.WITHOUT_SECURITY)
@DirtiesContext
class GatewayRedisTest extends GatewayScenarios {

    @RegisterExtension
    static final RedisServerExtension<RedisServer> REDIS = RedisServerExtension.standalone();

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        redis(registry, REDIS);
    }

    @Autowired
    ApplicationContext context;

    @Override
    protected String expectedStoreType() {
        return "lettuce";
    }

    @Test
    void theGatewaysOwnRedisRateLimiterStaysUnused() {
        assertThat(context.getBeansOfType(RedisRateLimiter.class)).hasSize(1);
        assertThat(filterFactory.getDefaultRateLimiter()).isNotInstanceOf(RedisRateLimiter.class);
    }
}
