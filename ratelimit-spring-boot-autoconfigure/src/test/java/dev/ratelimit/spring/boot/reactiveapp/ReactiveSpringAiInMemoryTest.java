package dev.ratelimit.spring.boot.reactiveapp;

import dev.ratelimit.spring.boot.SpringAiScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The WebFlux application with Spring AI on the in-memory store. */
@SpringBootTest(
        classes = ReactiveTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.main.web-application-type=reactive")
class ReactiveSpringAiInMemoryTest extends SpringAiScenarios {}
