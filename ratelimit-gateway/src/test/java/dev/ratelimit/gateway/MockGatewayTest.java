package dev.ratelimit.gateway;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** A fresh gateway in front of its built-in mock model for each test, in memory and on Redis. */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
abstract class MockGatewayTest {

    @Parameter
    Harness.Store store;

    Harness harness;

    @BeforeEach
    void start() throws Exception {
        harness = Harness.start(store, false);
    }

    @AfterEach
    void stop() {
        harness.close();
    }
}
