package dev.ratelimit.spring.boot.servletapp;

import dev.ratelimit.spring.boot.Scenarios;
import org.springframework.boot.test.context.SpringBootTest;

/** The servlet application on the in-memory store: the default when no Redis is configured. */
@SpringBootTest(classes = ServletTestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ServletInMemoryTest extends Scenarios {

    @Override
    protected String expectedStoreType() {
        return "in-memory";
    }
}
