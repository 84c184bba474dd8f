package dev.ratelimit.gateway;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** A fresh gateway in front of the {@link Upstreams} stubs for each test, in memory and on Redis. */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
abstract class UpstreamsTest {

    static final String MODEL = "claude-sonnet-4-5";

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    Upstreams upstreams;
    Harness harness;

    @BeforeEach
    void start() throws Exception {
        upstreams = Upstreams.start(store, directory);
        harness = upstreams.harness;
    }

    @AfterEach
    void stop() {
        upstreams.close();
    }
}
