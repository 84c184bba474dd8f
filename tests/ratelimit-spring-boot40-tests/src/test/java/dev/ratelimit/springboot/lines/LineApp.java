package dev.ratelimit.springboot.lines;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** A Spring MVC application with the starter and Spring Data Redis, as a user writes it. */
@SpringBootApplication
@RestController
public class LineApp {

    /** The limited endpoint. */
    @GetMapping("/api/hello")
    String hello() {
        return "hello";
    }

    /** The application's own pub/sub listener container, on Boot's connection factory. */
    @Bean
    RedisMessageListenerContainer redisMessageListenerContainer(RedisConnectionFactory connectionFactory) {
        RedisMessageListenerContainer container = new RedisMessageListenerContainer();
        container.setConnectionFactory(connectionFactory);
        return container;
    }
}
