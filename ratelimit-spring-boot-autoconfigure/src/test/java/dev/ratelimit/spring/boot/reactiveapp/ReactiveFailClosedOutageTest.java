package dev.ratelimit.spring.boot.reactiveapp;

import dev.ratelimit.spring.boot.OutageScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The WebFlux application on Redis, ratelimit.fail-open=false, when Redis stops. */
@SpringBootTest(
        classes = ReactiveTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"spring.main.web-application-type=reactive", "ratelimit.fail-open=false"})
class ReactiveFailClosedOutageTest extends OutageScenarios {

    @Override
    protected boolean failOpen() {
        return false;
    }
}
