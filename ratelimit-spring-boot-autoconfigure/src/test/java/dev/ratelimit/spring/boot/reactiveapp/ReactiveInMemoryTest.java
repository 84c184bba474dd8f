package dev.ratelimit.spring.boot.reactiveapp;

import org.springframework.boot.test.context.SpringBootTest;

/** The WebFlux application on the in-memory store: the default when no Redis is configured. */
@SpringBootTest(
        classes = ReactiveTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.main.web-application-type=reactive")
class ReactiveInMemoryTest extends ReactiveScenarios {

    @Override
    protected String expectedStoreType() {
        return "in-memory";
    }
}
