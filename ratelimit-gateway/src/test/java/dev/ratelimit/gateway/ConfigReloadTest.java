package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The configuration file changed under a running gateway: a valid file takes effect as a whole
 * (new keys and tiers) within 2 s of the change while a request in flight finishes under the old
 * one; an invalid file is refused with every error logged at once, counted, and the previous
 * configuration stays.
 */
class ConfigReloadTest {

    /** The bound: a valid change takes effect within 2 s of the file's change (checked every 0.5 s). */
    static final Duration RELOAD_BOUND = Duration.ofSeconds(2);

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
    @DisplayName(
            "a changed file swaps keys and tiers within 2 s; a stream in flight finishes; a bad file is refused, every error logged")
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

            replace(file, config("k-new", 50));
            long changed = System.nanoTime();
            Harness.await("the new key is accepted", () -> status(harness, "k-new") == 200);
            long tookMillis = Duration.ofNanos(System.nanoTime() - changed).toMillis();
            System.out.println("config reload: the new key worked " + tookMillis + " ms after the file changed");
            assertThat(tookMillis)
                    .as("a valid change takes effect within %d ms of the file's change", RELOAD_BOUND.toMillis())
                    .isLessThan(RELOAD_BOUND.toMillis());
            HttpResponse<String> underNew = harness.chat("k-new", PLAIN);
            assertThat(underNew.headers().firstValue("x-ratelimit-limit-requests"))
                    .contains("50");
            assertThat(harness.chat("k-old", PLAIN).statusCode())
                    .as("the old key is gone")
                    .isEqualTo(401);

            release.countDown();
            String body = new String(inFlight.body().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(body).contains("[DONE]");
            Harness.await("the stream begun under the old file is settled", () -> {
                try {
                    return harness.settlements("committed", "stream_completed") == 1;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            // two errors in one file: both are logged in the one warning that refuses it
            String log;
            try (LogCapture capture = LogCapture.start()) {
                replace(
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
                log = capture.text();
            }
            int refused = log.indexOf("Configuration not reloaded");
            assertThat(refused).as("the refusal is logged: %s", log).isNotNegative();
            assertThat(log.substring(refused))
                    .contains("the previous one stays in force")
                    .containsPattern("[2-9] errors:")
                    .contains("tiers.t.max-concurrent: must be at least 1, was 0")
                    .contains("limits.max-body-bytes: must be at least 1, was 0");
            assertThat(log).as("no key in the log").doesNotContain("k-bad");
            assertThat(harness.chat("k-new", PLAIN).statusCode())
                    .as("the previous file stays")
                    .isEqualTo(200);
            assertThat(harness.chat("k-bad", PLAIN).statusCode()).isEqualTo(401);
            assertThat(harness.metric("gateway_config_reloads_total")).isEqualTo(1);
        }
    }

    /**
     * Replaces the file in one step, as editors and configuration managers do (a temporary file
     * moved over it), so the watch never reads it half written.
     */
    private static void replace(Path file, String content) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, content);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * What the gateway logs meanwhile: slf4j-simple, behind the JDK's {@code System.Logger}, writes
     * to whatever {@code System.err} is at the time of each line; the lines still reach the original.
     */
    static final class LogCapture implements AutoCloseable {
        private final PrintStream original = System.err;
        private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

        static LogCapture start() {
            LogCapture capture = new LogCapture();
            System.setErr(new PrintStream(new TeeOutputStream(capture.original, capture.captured), true));
            return capture;
        }

        String text() {
            synchronized (captured) {
                return captured.toString(StandardCharsets.UTF_8);
            }
        }

        @Override
        public void close() {
            System.setErr(original);
        }
    }

    /** Writes to the original stream and keeps a copy. */
    private static final class TeeOutputStream extends OutputStream {
        private final OutputStream original;
        private final ByteArrayOutputStream copy;

        TeeOutputStream(OutputStream original, ByteArrayOutputStream copy) {
            this.original = original;
            this.copy = copy;
        }

        @Override
        public void write(int b) throws IOException {
            original.write(b);
            synchronized (copy) {
                copy.write(b);
            }
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            original.write(bytes, offset, length);
            synchronized (copy) {
                copy.write(bytes, offset, length);
            }
        }

        @Override
        public void flush() throws IOException {
            original.flush();
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
