package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A cooldown is shared through Redis: two gateway processes on one store hold back together, on one
 * redis-server and on a Redis Cluster (where the announcement travels the cluster's pub/sub).
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"REDIS", "CLUSTER"})
class SharedCooldownTest {

    private static final String MODEL = UpstreamsTest.MODEL;

    @Parameter
    Harness.Store store;

    @TempDir
    Path directory;

    private Upstreams upstreams;

    @BeforeEach
    void start() throws Exception {
        upstreams = Upstreams.start(store, directory);
    }

    @AfterEach
    void stop() {
        upstreams.close();
    }

    @Test
    @DisplayName("two gateway processes on one Redis (or cluster) share the cooldown and its one probe per interval")
    void sharedBetweenProcesses() throws Exception {
        Harness harness = upstreams.harness;
        try (Harness second = Upstreams.gateway(store, upstreams.config)) {
            second.clock.set(harness.clock.instant());
            for (int i = 0; i < 10; i++) {
                upstreams.anthropic.enqueue(AnthropicStub.status(429, Map.of("retry-after", "60")));
            }
            CooldownTest.send(harness, 1);
            // the second process learns of it by the announcement on Redis, a round trip later
            Harness.await("the second process knows the cooldown", () -> second.cooling(MODEL));
            CooldownTest.send(second, 3);
            assertThat(upstreams.anthropic.received())
                    .as("the second process holds back too")
                    .hasSize(1);

            harness.clock.advance(CooldownTest.PROBE_INTERVAL);
            second.clock.advance(CooldownTest.PROBE_INTERVAL);
            CooldownTest.send(harness, 2);
            CooldownTest.send(second, 2);
            assertThat(upstreams.anthropic.received())
                    .as("one probe for both processes")
                    .hasSize(2);
        }
    }
}
