package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The composition root closes what it opened when a later step fails: a gateway whose port is taken
 * fails to start with a message naming the port, and leaves no thread of its own behind (its pool,
 * the mock model's, the Lettuce client resources').
 */
class AssemblyTest {

    private static Set<String> threads() {
        return Harness.liveThreads().stream()
                .filter(name ->
                        name.startsWith("gateway") || name.startsWith("mock-model") || name.startsWith("lettuce-"))
                .collect(Collectors.toSet());
    }

    @ParameterizedTest
    @EnumSource(
            value = Harness.Store.class,
            names = {"MEMORY", "REDIS"})
    void aFailedStartClosesWhatItOpened(Harness.Store store) throws Exception {
        Set<String> before = threads();
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Map<String, String> environment = new HashMap<>();
            environment.put("PORT", String.valueOf(taken.getLocalPort()));
            environment.put("MANAGEMENT_PORT", "0");
            environment.put("GATEWAY_CONFIG", Harness.testConfig().toString());
            if (store == Harness.Store.REDIS) {
                environment.put("REDIS_URL", Harness.redis().uri());
            }
            assertThatThrownBy(() -> GatewayServer.start(environment, null))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("port " + taken.getLocalPort());
        }
        Harness.await("the failed start's threads have ended", () -> {
            Set<String> left = threads();
            left.removeAll(before);
            return left.isEmpty();
        });
        Set<String> left = threads();
        left.removeAll(before);
        assertThat(left).isEmpty();
    }
}
