package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.KillSwitchScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The servlet application with the kill switch on. */
@SpringBootTest(
        classes = ServletTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.enabled=false")
class ServletKillSwitchTest extends KillSwitchScenarios {}
