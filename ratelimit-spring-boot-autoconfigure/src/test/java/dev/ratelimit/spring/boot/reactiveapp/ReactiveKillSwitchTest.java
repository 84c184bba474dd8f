package dev.ratelimit.spring.boot.reactiveapp;

import dev.ratelimit.spring.boot.KillSwitchScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The WebFlux application with the kill switch on. */
@SpringBootTest(
        classes = ReactiveTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "ratelimit.enabled=false"})
class ReactiveKillSwitchTest extends KillSwitchScenarios {}
