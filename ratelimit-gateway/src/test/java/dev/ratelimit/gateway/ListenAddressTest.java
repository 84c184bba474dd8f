package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.testsupport.RefusedPort;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the gateway listens: 127.0.0.1 unless told, {@code HOST} or the file's {@code server.host}
 * otherwise, {@code 0.0.0.0} on every interface. A second address of the loopback range (127.0.0.2)
 * stands for another interface: it reaches a gateway listening everywhere and no other.
 */
class ListenAddressTest {

    @TempDir
    Path directory;

    @Test
    @DisplayName("by default the gateway listens on 127.0.0.1 only")
    void loopbackByDefault() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false)) {
            int port = harness.server.port();
            assertThat(reachable("127.0.0.1", port)).isTrue();
            assertThat(reachable("127.0.0.2", port)).isFalse();
            assertThat(harness.base()).isEqualTo("http://127.0.0.1:" + port);
        }
    }

    @Test
    @DisplayName("HOST=0.0.0.0 listens on every interface; the banner says so and gives a loopback URL")
    void everyInterface() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false, Map.of("HOST", "0.0.0.0"))) {
            int port = harness.server.port();
            assertThat(reachable("127.0.0.1", port)).isTrue();
            assertThat(reachable("127.0.0.2", port)).isTrue();
            assertThat(harness.get("/health/live", null).statusCode()).isEqualTo(200);
            java.io.ByteArrayOutputStream banner = new java.io.ByteArrayOutputStream();
            harness.server.printBanner(new java.io.PrintStream(banner, true, "UTF-8"));
            assertThat(banner.toString("UTF-8"))
                    .contains("listening on http://0.0.0.0:" + port + " (every interface)")
                    .contains("curl http://127.0.0.1:" + port + "/v1/chat/completions");
        }
    }

    @Test
    @DisplayName("server.host and server.port in the file are used; HOST and PORT win over them")
    void fromTheFile() throws Exception {
        Path config = directory.resolve("gateway.yaml");
        // held on 127.0.0.1 so that nothing else there (the management listener on port 0, say) is given the port
        try (RefusedPort onLoopback = RefusedPort.open()) {
            int port = onLoopback.port();
            String yaml =
                    Files.readString(Harness.testConfig()) + "\nserver:\n  host: 127.0.0.2\n  port: " + port + "\n";
            Files.writeString(config, yaml);
            Map<String, String> environment = Map.of("GATEWAY_CONFIG", config.toString(), "PORT", "");
            try (Harness harness = Harness.start(Harness.Store.MEMORY, false, environment)) {
                assertThat(harness.server.port()).isEqualTo(port);
                assertThat(reachable("127.0.0.2", port)).isTrue();
                assertThat(reachable("127.0.0.1", port)).isFalse();
            }
            Map<String, String> overridden =
                    Map.of("GATEWAY_CONFIG", config.toString(), "HOST", "127.0.0.1", "PORT", "0");
            try (Harness harness = Harness.start(Harness.Store.MEMORY, false, overridden)) {
                assertThat(harness.server.port()).isNotEqualTo(port);
                assertThat(reachable("127.0.0.1", harness.server.port())).isTrue();
                assertThat(reachable("127.0.0.2", harness.server.port())).isFalse();
            }
        }
    }

    private static boolean reachable(String address, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address, port), 2_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
