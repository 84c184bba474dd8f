package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The admin surfaces (status page, {@code /status.json}, {@code /metrics}) are served by the
 * management listener alone. The API listens on every interface, the management listener on
 * 127.0.0.1 only; 127.0.0.2, a second address of the loopback range, stands for a client on
 * another host.
 */
class ManagementListenerTest {

    private static final List<String> ADMIN_PATHS = List.of("/", "/status.json", "/metrics");

    @Test
    @DisplayName("from another address the admin paths are 404 on the API port and the management port refuses;"
            + " the API and health answer")
    void adminPathsAreNotPublic() throws Exception {
        try (Harness harness = Harness.start(Harness.Store.MEMORY, false, Map.of("HOST", "0.0.0.0"))) {
            String api = "http://127.0.0.2:" + harness.server.port();
            for (String path : ADMIN_PATHS) {
                HttpResponse<String> response = get(harness, api + path, null);
                assertThat(response.statusCode()).as(path).isEqualTo(404);
                assertThat(OpenAi.JSON
                                .readTree(response.body())
                                .path("error")
                                .path("code")
                                .asText())
                        .as(path)
                        .isEqualTo("unknown_url");
                assertThat(response.body()).doesNotContain("demo-free", "tenant", "<html");
                // a client key opens nothing either
                HttpResponse<String> withKey = get(harness, api + path, "demo-enterprise");
                assertThat(withKey.statusCode()).as(path + " with a key").isEqualTo(404);
            }
            for (String path : List.of("/health", "/health/live", "/health/ready")) {
                assertThat(get(harness, api + path, null).statusCode()).as(path).isEqualTo(200);
            }
            HttpResponse<String> chat = harness.http.send(
                    HttpRequest.newBuilder(URI.create(api + "/v1/chat/completions"))
                            .header("Authorization", "Bearer demo-free")
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"gpt-4o-mini\",\"messages\":"
                                    + "[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(chat.statusCode()).isEqualTo(200);

            String elsewhere = "http://127.0.0.2:" + harness.server.managementPort();
            assertThatThrownBy(() -> get(harness, elsewhere + "/metrics", null)).isInstanceOf(ConnectException.class);

            String management = "http://127.0.0.1:" + harness.server.managementPort();
            assertThat(harness.server.managementUrl()).isEqualTo(management);
            HttpResponse<String> page = get(harness, management + "/", null);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("<title>ratelimit gateway</title>");
            assertThat(get(harness, management + "/status.json", null).body()).contains("\"tenants\"");
            assertThat(get(harness, management + "/metrics", null).body()).contains("ratelimit_");
            assertThat(get(harness, management + "/health/ready", null).statusCode())
                    .isEqualTo(200);
            // the API is not on the management listener
            assertThat(get(harness, management + "/v1/models", "demo-free").statusCode())
                    .isEqualTo(404);

            ByteArrayOutputStream banner = new ByteArrayOutputStream();
            harness.server.printBanner(new PrintStream(banner, true, StandardCharsets.UTF_8));
            assertThat(banner.toString(StandardCharsets.UTF_8))
                    .contains("listening on http://0.0.0.0:" + harness.server.port() + " (every interface)")
                    .contains("management: " + management + " (status page")
                    .contains("see:      " + management + "/ (status), " + management + "/metrics");
        }
    }

    @Test
    @DisplayName("management.host and management.port may be set in the file; one port for both is refused")
    void managementSettings() throws Exception {
        assertThatThrownBy(() -> GatewayServer.start(Map.of("PORT", "18080", "MANAGEMENT_PORT", "18080"), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MANAGEMENT_PORT (management.port) must differ from PORT");
        assertThatThrownBy(() -> GatewayServer.start(Map.of("PORT", "0", "MANAGEMENT_PORT", "x"), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("MANAGEMENT_PORT must be a number");
        GatewayConfig config = GatewayConfig.parse(
                new ByteArrayInputStream(
                        (Files.readString(Harness.testConfig()) + "\nmanagement:\n  host: 127.0.0.3\n  port: 9191\n")
                                .getBytes(StandardCharsets.UTF_8)),
                "test");
        assertThat(config.server().managementHost()).isEqualTo("127.0.0.3");
        assertThat(config.server().managementPort()).isEqualTo(9191);
    }

    private static HttpResponse<String> get(Harness harness, String url, @Nullable String key) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        if (key != null) {
            request.header("Authorization", "Bearer " + key);
        }
        return harness.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
