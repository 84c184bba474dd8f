package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The gateway as users start it: a separate JVM with PORT=0 and the built-in configuration, driven over HTTP. */
class GatewayProcessTest {

    private static final Pattern LISTENING = Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");

    @Test
    void gatewayProcessServesLimitsAndMetrics() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder =
                new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), GatewayServer.class.getName());
        builder.environment().put("PORT", "0");
        builder.environment().remove("REDIS_URL");
        builder.environment().remove("GATEWAY_CONFIG");
        builder.environment().remove("UPSTREAM_URL");
        builder.environment().remove("RATE_LIMIT_DISABLED");
        builder.redirectErrorStream(true);
        Process process = builder.start();
        List<String> output = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                int listening = -1;
                while ((line = lines.readLine()) != null) {
                    output.add(line);
                    Matcher matcher = LISTENING.matcher(line);
                    if (matcher.find()) {
                        listening = Integer.parseInt(matcher.group(1));
                    }
                    if (listening >= 0 && line.startsWith("see:")) { // the banner's last line
                        port.complete(listening);
                    }
                }
            } catch (Exception e) {
                port.completeExceptionally(e);
            } finally {
                port.completeExceptionally(new IllegalStateException("gateway exited before listening: " + output));
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            String base = "http://127.0.0.1:" + port.get(120, TimeUnit.SECONDS);
            assertThat(String.join("\n", output))
                    .contains("upstream: built-in mock model")
                    .contains("store:    in-memory")
                    .contains("curl " + base + "/v1/chat/completions -H 'Authorization: Bearer demo-free'");

            HttpClient client =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String body = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}";
            HttpResponse<String> last = null;
            for (int i = 1; i <= 6; i++) {
                last = client.send(
                        HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                                .timeout(Duration.ofSeconds(30))
                                .header("Authorization", "Bearer demo-free")
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                if (i < 6) {
                    assertThat(last.statusCode()).as("completion %d", i).isEqualTo(200);
                    assertThat(last.body()).contains("\"usage\":");
                }
            }
            assertThat(last.statusCode()).isEqualTo(429);
            assertThat(last.headers().firstValue("Retry-After")).isPresent();

            HttpResponse<String> badKey = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                            .header("Authorization", "Bearer not-a-key")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(badKey.statusCode()).isEqualTo(401);
            assertThat(badKey.body()).contains("invalid_api_key");

            HttpResponse<String> metrics = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body())
                    .contains("ratelimit_decisions_total{limiter=\"gateway\",outcome=\"allowed\",tier=\"free\","
                            + "window=\"minute\"} 5.0")
                    .contains("ratelimit_decisions_total{limiter=\"gateway\",outcome=\"rejected\",tier=\"free\","
                            + "window=\"minute\"} 1.0")
                    .contains("ratelimit_fail_open{limiter=\"gateway\"} 0.0");
        } finally {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
