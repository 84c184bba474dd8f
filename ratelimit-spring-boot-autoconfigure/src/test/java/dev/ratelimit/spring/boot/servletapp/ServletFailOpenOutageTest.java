package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.OutageScenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The servlet application on Redis, ratelimit.fail-open=true, when Redis stops. */
@SpringBootTest(
        classes = ServletTestApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "ratelimit.fail-open=true")
class ServletFailOpenOutageTest extends OutageScenarios {

    @Override
    protected boolean failOpen() {
        return true;
    }
}
