package dev.ratelimit.springboot.lines;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spring.boot.RateLimitStoreInfo;
import dev.ratelimit.testsupport.redis.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * One Boot application on one private Redis, started by a subclass: the limiter's 429 contract, and the
 * application's own {@code StringRedisTemplate} beside it (strings, KEYS, SCAN, hashes, TTL, DEL, pub/sub).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LineScenarios {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private @Nullable RedisServer redis;
    private @Nullable ConfigurableApplicationContext context;

    /** Starts the private Redis of this class. */
    abstract RedisServer startRedis();

    /** The application's connection properties for {@code redis}, and any others the driver needs. */
    abstract List<String> redisProperties(RedisServer redis);

    @BeforeAll
    void startApplication() {
        RedisServer server = startRedis();
        redis = server;
        List<String> properties = new ArrayList<>(List.of(
                "server.port=0",
                "ratelimit.tiers.free.minute=5/1m",
                "ratelimit.default-tier=free",
                "ratelimit.paths=/api/*"));
        properties.addAll(redisProperties(server));
        context = new SpringApplicationBuilder(LineApp.class)
                .properties(properties.toArray(String[]::new))
                .run();
    }

    @AfterAll
    void stop() {
        if (context != null) {
            context.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    /** The store the starter chose: the subclass's driver. */
    abstract String expectedStore();

    @Test
    @DisplayName("the starter's store is the expected Redis driver's")
    void storeIsRedis() {
        assertThat(context.getBean(RateLimitStoreInfo.class).type()).isEqualTo(expectedStore());
    }

    @Test
    @DisplayName("the sixth request of a minute gets 429 with Retry-After and the contract's headers")
    void sixthRequestIsRefused() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        HttpResponse<String> last = null;
        for (int i = 0; i < 6; i++) {
            last = get("/api/hello");
            statuses.add(last.statusCode());
        }
        assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429);
        assertThat(last.headers().firstValue("Retry-After")).isPresent();
        assertThat(last.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
        assertThat(last.headers().firstValue("X-RateLimit-Degraded")).isEmpty();
    }

    @Test
    @DisplayName("the application's StringRedisTemplate: SET/GET, KEYS, SCAN, hashes, EXPIRE/TTL, DEL")
    void templateCommands() {
        StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
        template.opsForValue().set("app:one", "1");
        template.opsForValue().set("app:two", "2");
        assertThat(template.opsForValue().get("app:one")).isEqualTo("1");
        assertThat(template.keys("app:*")).containsExactlyInAnyOrder("app:one", "app:two");

        Set<String> scanned = new HashSet<>();
        try (Cursor<String> cursor =
                template.scan(ScanOptions.scanOptions().match("app:*").count(10).build())) {
            cursor.forEachRemaining(scanned::add);
        }
        assertThat(scanned).containsExactlyInAnyOrder("app:one", "app:two");

        template.opsForHash().putAll("app:hash", Map.of("a", "1", "b", "2"));
        assertThat(template.<String, String>opsForHash().entries("app:hash")).isEqualTo(Map.of("a", "1", "b", "2"));

        assertThat(template.expire("app:one", Duration.ofSeconds(100))).isTrue();
        assertThat(template.getExpire("app:one", TimeUnit.SECONDS)).isBetween(1L, 100L);

        assertThat(template.delete(List.of("app:one", "app:two", "app:hash"))).isEqualTo(3);
        assertThat(template.keys("app:*")).isEmpty();
    }

    @Test
    @DisplayName("a pub/sub round trip through the application's listener container and template")
    void publishSubscribe() throws Exception {
        StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
        RedisMessageListenerContainer container = context.getBean(RedisMessageListenerContainer.class);
        BlockingQueue<String> received = new ArrayBlockingQueue<>(10);
        container.addMessageListener(
                (message, pattern) -> received.add(new String(message.getBody())), new ChannelTopic("app:events"));
        // the subscription is made asynchronously: publish until it is there
        String message = null;
        for (int attempt = 0; attempt < 100 && message == null; attempt++) {
            template.convertAndSend("app:events", "ping");
            message = received.poll(100, TimeUnit.MILLISECONDS);
        }
        assertThat(message).isEqualTo("ping");
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
