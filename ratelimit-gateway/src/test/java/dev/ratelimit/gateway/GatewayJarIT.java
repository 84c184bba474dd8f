package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The packaged artifact: {@code java -jar target/ratelimit-gateway.jar}, as the README and the Dockerfile run it. */
class GatewayJarIT {

    private static final String HELLO =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";

    @Test
    @DisplayName("java -jar starts the gateway, which serves its first completion; the time to it is printed")
    void jarStartsAndServes() throws Exception {
        try (JarFile jar = new JarFile("target/ratelimit-gateway.jar")) {
            Manifest manifest = jar.getManifest();
            assertThat(manifest.getMainAttributes().getValue("Main-Class")).isEqualTo(GatewayServer.class.getName());
            assertThat(manifest.getMainAttributes().getValue("Class-Path")).contains("lib/ratelimit-core-");
        }
        try (GatewayProcess gateway = GatewayProcess.jar(Map.of())) {
            String base = gateway.base();
            long listening = System.nanoTime();
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            HttpResponse<String> first = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                            .timeout(Duration.ofSeconds(30))
                            .header("Authorization", "Bearer demo-free")
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(HELLO))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            long served = System.nanoTime();
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.body()).contains("\"usage\":");
            assertThat(gateway.output()).contains("listening on http://127.0.0.1:" + gateway.port());
            System.out.printf(
                    "gateway jar: banner %d ms after the process started, first completion served %d ms after it%n",
                    Duration.ofNanos(listening - gateway.startedNanos).toMillis(),
                    Duration.ofNanos(served - gateway.startedNanos).toMillis());
            assertThat(gateway.terminate(60)).as("exit code after SIGTERM").isZero();
        }
    }

    @Test
    @DisplayName("SIGHUP reloads the configuration file (here with the file watch off, so only the signal can)")
    void sighupReloads(@org.junit.jupiter.api.io.TempDir java.nio.file.Path directory) throws Exception {
        java.nio.file.Path file = directory.resolve("gateway.yaml");
        String before = """
                keys:
                  - { key: k-one, tenant: acme, tier: t }
                tiers:
                  t: { max-concurrent: 2, windows: { minute: 100/1m } }
                server: { watch-config: false }
                """;
        java.nio.file.Files.writeString(file, before);
        try (GatewayProcess gateway = GatewayProcess.jar(Map.of("GATEWAY_CONFIG", file.toString()))) {
            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            assertThat(chat(client, gateway.base(), "k-two")).isEqualTo(401);
            java.nio.file.Files.writeString(file, before.replace("k-one", "k-two"));
            Process hup = new ProcessBuilder("kill", "-HUP", Long.toString(gateway.process.pid()))
                    .inheritIO()
                    .start();
            assertThat(hup.waitFor()).isZero();
            Harness.await("SIGHUP reloaded the file", () -> {
                try {
                    return chat(client, gateway.base(), "k-two") == 200;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(chat(client, gateway.base(), "k-one")).isEqualTo(401);
            assertThat(gateway.output()).doesNotContain("k-one").doesNotContain("k-two");
            assertThat(gateway.terminate(60)).isZero();
        }
    }

    private static int chat(HttpClient client, String base, String key) throws Exception {
        return client.send(
                        HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                                .timeout(Duration.ofSeconds(30))
                                .header("Authorization", "Bearer " + key)
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(HELLO))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }
}
