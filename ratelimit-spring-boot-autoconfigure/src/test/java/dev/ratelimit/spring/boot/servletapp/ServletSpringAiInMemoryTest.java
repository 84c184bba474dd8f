package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.SpringAiScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The Spring MVC application with Spring AI on the in-memory store. */
@SpringBootTest(classes = ServletTestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ServletSpringAiInMemoryTest extends SpringAiScenarios {}
