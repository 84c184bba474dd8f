package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration file changed under a running gateway: a valid file takes effect as a whole
 * (new keys and tiers) while a request in flight finishes under the old one; an invalid file is
 * refused, counted, and the previous configuration stays.
 */
class ConfigReloadTest {

    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAM =
            "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    @TempDir
    Path directory;

    private static String config(String key, int perMinute) {
        return """
                keys:
                  - { key: %s, tenant: acme, tier: t }
                tiers:
                  t:
                    max-concurrent: 5
                    windows: { minute: %d/1m }
                """.formatted(key, perMinute);
    }

    @Test
    @DisplayName("a changed file swaps keys and tiers at once; a stream in flight finishes; a bad file is refused")
    void reload() throws Exception {
        Path file = directory.resolve("gateway.yaml");
        Files.writeString(file, config("k-old", 100));
        try (Harness harness = Harness.start(Harness.Store.MEMORY, true, Map.of("GATEWAY_CONFIG", file.toString()))) {
            assertThat(harness.chat("k-new", PLAIN).statusCode()).isEqualTo(401);
            CountDownLatch release = new CountDownLatch(1);
            harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
            HttpResponse<InputStream> inFlight =
                    harness.http.send(harness.chatRequest("k-old", STREAM), HttpResponse.BodyHandlers.ofInputStream());
            assertThat(inFlight.statusCode()).isEqualTo(200);

            Files.writeString(file, config("k-new", 50));
            long changed = System.nanoTime();
            Harness.await("the new key is accepted", () -> status(harness, "k-new") == 200);
            System.out.println("config reload: the new key worked "
                    + java.time.Duration.ofNanos(System.nanoTime() - changed).toMillis()
                    + " ms after the file changed");
            HttpResponse<String> underNew = harness.chat("k-new", PLAIN);
            assertThat(underNew.headers().firstValue("x-ratelimit-limit-requests"))
                    .contains("50");
            assertThat(harness.chat("k-old", PLAIN).statusCode())
                    .as("the old key is gone")
                    .isEqualTo(401);

            release.countDown();
            String body = new String(inFlight.body().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(body).contains("[DONE]");
            Harness.await("the stream begun under the old file is settled", () -> {
                try {
                    return harness.settlements("committed", "stream_completed") == 1;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            Files.writeString(
                    file,
                    config("k-bad", 50).replace("max-concurrent: 5", "max-concurrent: 0")
                            + "limits: { max-body-bytes: 0 }\n");
            Harness.await("the bad file is refused and counted", () -> {
                try {
                    return harness.metric("gateway_config_reload_failures_total") == 1;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(harness.chat("k-new", PLAIN).statusCode())
                    .as("the previous file stays")
                    .isEqualTo(200);
            assertThat(harness.chat("k-bad", PLAIN).statusCode()).isEqualTo(401);
            assertThat(harness.metric("gateway_config_reloads_total")).isEqualTo(1);
        }
    }

    private static int status(Harness harness, String key) {
        try {
            return harness.chat(key, PLAIN).statusCode();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
