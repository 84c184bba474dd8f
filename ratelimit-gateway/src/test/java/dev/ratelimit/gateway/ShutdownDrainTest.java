package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.store.GatewayStore;
import dev.ratelimit.testsupport.redis.RedisServer;
import dev.ratelimit.testsupport.redis.RedisServerExtension;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM to a gateway process on a private redis-server while 20 streams are open: the process
 * exits 0, and afterwards Redis holds no in-flight slot and every reservation is settled, whether
 * the streams finish before the shutdown deadline or are cut at it.
 *
 * <p>Every wait is bounded: the streams' readers by {@link Future#get(long, TimeUnit)}, the exit by
 * {@link GatewayProcess#awaitExit}, the stub's held streams by their own 30 s and by the release in
 * {@code finally}. The process's output is read as it comes ({@link GatewayProcess}), so its pipe
 * never fills however much the access log writes, and SIGTERM goes through the process's handle:
 * {@link Process#destroy()} also closes the pipe, so the lines the gateway prints while it drains
 * (the shutdown's and the access log's) never arrived and a wait for them could only time out.
 * That, not the gateway, was what stalled an earlier draft; the gateway drained and exited 0.
 */
class ShutdownDrainTest {

    @RegisterExtension
    final RedisServerExtension<RedisServer> redis = RedisServerExtension.standalone();

    @TempDir
    Path directory;

    private static final int STREAMS = 20;
    private static final int CHUNKS = 3;
    private static final String TENANT = "drain";
    private static final String STREAM = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"max_tokens\":50,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

    /** What one client read of its stream. */
    private record Read(int status, String body, boolean done, boolean cut) {}

    @Test
    @DisplayName("SIGTERM during 20 streams, deadline longer than them: they finish, each settles its usage, exit 0")
    void streamsFinishBeforeTheDeadline() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        Drained drained = drain(30, release, true);

        assertThat(drained.exit).as("exit code").isZero();
        assertThat(drained.reads).allSatisfy(read -> {
            assertThat(read.status()).isEqualTo(200);
            assertThat(read.done()).as("ended with [DONE]: %s", read.body()).isTrue();
        });
        assertThat(drained.output).contains("every request in flight finished").contains("; 0 admissions cancelled");
        // each stream settled to the upstream's usage chunk, 11 + 7, not to its estimate
        assertThat(drained.lines).hasSize(STREAMS).allSatisfy(line -> {
            assertThat(line.path("ending").asText()).isEqualTo("stream_completed");
            assertThat(line.path("settledTokens").asLong()).isEqualTo(StubUpstream.PROMPT + StubUpstream.COMPLETION);
        });
        assertSettled(drained, (long) STREAMS * (StubUpstream.PROMPT + StubUpstream.COMPLETION));
    }

    @Test
    @DisplayName("SIGTERM during 20 streams, deadline shorter than them: they are cut at it, each settles, exit 0")
    void streamsAreCutAtTheDeadline() throws Exception {
        CountDownLatch release = new CountDownLatch(1); // released only after the process has exited
        Drained drained = drain(1, release, false);

        assertThat(drained.exit).as("exit code").isZero();
        assertThat(drained.reads).allSatisfy(read -> {
            assertThat(read.status()).isEqualTo(200);
            assertThat(read.done())
                    .as("no [DONE] on a cut stream: %s", read.body())
                    .isFalse();
        });
        assertThat(drained.output).contains("deadline passed");
        // every stream was cut after what it relayed and committed that (with the prompt), not its estimate
        assertThat(drained.lines).hasSize(STREAMS).allSatisfy(line -> {
            assertThat(line.path("ending").asText())
                    .as("ending of %s", line)
                    .isIn("stream_broken", "client_disconnected");
            assertThat(line.path("settledTokens").asLong())
                    .as("settled tokens of %s", line)
                    .isPositive()
                    .isLessThan(line.path("estimatedTokens").asLong());
        });
        long settled = drained.lines.stream()
                .mapToLong(line -> line.path("settledTokens").asLong())
                .sum();
        assertSettled(drained, settled);
    }

    private record Drained(int exit, List<Read> reads, String output, List<JsonNode> lines, GatewayConfig config) {}

    /**
     * Starts a gateway process on the private Redis and a stub upstream, opens {@link #STREAMS}
     * streams that each get {@link #CHUNKS} chunks and then wait for {@code release}, sends SIGTERM
     * once every one has its first chunk and releases them after the gateway says it is shutting
     * down ({@code releaseDuringDrain}) or only after it has exited.
     */
    private Drained drain(int deadlineSeconds, CountDownLatch release, boolean releaseDuringDrain) throws Exception {
        Path file = directory.resolve("gateway.yaml");
        Files.writeString(file, """
                keys:
                  - { key: k-drain, tenant: %s, tier: t }
                tiers:
                  t:
                    max-concurrent: %d
                    windows: { minute: 1000/1m, tokens-minute: 1000000 tokens/1m }
                models:
                  gpt-4o-mini: { rpm: 1000, tpm: 1000000 }
                limits:
                  upstream-first-byte-timeout-ms: 10000
                  upstream-idle-timeout-ms: 60000
                server:
                  shutdown-timeout-seconds: %d
                """.formatted(TENANT, STREAMS, deadlineSeconds));
        GatewayConfig config = GatewayConfig.load(file.toString(), Map.of());
        ExecutorService readers = Executors.newFixedThreadPool(STREAMS);
        try (StubUpstream stub = StubUpstream.start()) {
            try (GatewayProcess gateway = GatewayProcess.onClassPath(Map.of(
                    "GATEWAY_CONFIG", file.toString(),
                    "REDIS_URL", redis.get().uri(),
                    "UPSTREAM_URL", stub.baseUrl(),
                    "UPSTREAM_API_KEY", "sk-upstream",
                    "ACCESS_LOG", "stdout"))) {
                String base = gateway.base();
                CountDownLatch ended = new CountDownLatch(STREAMS);
                for (int i = 0; i < STREAMS; i++) {
                    stub.enqueue(StubUpstream.stream(CHUNKS, release, StubUpstream.Then.FINISH, ended));
                }
                HttpClient client = HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(10))
                        .build();
                CountDownLatch streaming = new CountDownLatch(STREAMS);
                List<Future<Read>> reads = new ArrayList<>();
                for (int i = 0; i < STREAMS; i++) {
                    reads.add(readers.submit(() -> read(client, base, streaming)));
                }
                assertThat(streaming.await(60, TimeUnit.SECONDS))
                        .as("every stream has its first chunk: %s", gateway.output())
                        .isTrue();
                assertThat(inFlight()).as("slots held while streaming").isEqualTo(STREAMS);

                gateway.sigterm();
                awaitOutput(gateway, "ratelimit gateway: shutting down; " + STREAMS + " metered requests in flight");
                if (releaseDuringDrain) {
                    release.countDown();
                }
                int exit = gateway.awaitExit(deadlineSeconds + 30L);
                release.countDown(); // the stub's held streams end now, whatever happened
                List<Read> results = new ArrayList<>();
                for (Future<Read> read : reads) {
                    results.add(read.get(30, TimeUnit.SECONDS)); // the process is gone: every read has ended
                }
                String output = gateway.output();
                List<JsonNode> lines = new ArrayList<>();
                for (String line : output.split("\n")) {
                    if (line.startsWith("{") && line.contains("\"tenant\":\"" + TENANT + "\"")) {
                        lines.add(OpenAi.JSON.readTree(line));
                    }
                }
                return new Drained(exit, results, output, lines, config);
            } finally {
                release.countDown();
            }
        } finally {
            readers.shutdownNow();
            if (!readers.awaitTermination(30, TimeUnit.SECONDS)) {
                throw new AssertionError("a stream reader did not end");
            }
        }
    }

    /** One streamed request: reads until the stream ends, cleanly or cut. */
    private static Read read(HttpClient client, String base, CountDownLatch streaming) throws Exception {
        HttpResponse<InputStream> response = client.send(
                HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                        .timeout(Duration.ofSeconds(30)) // until the response headers
                        .header("Authorization", "Bearer k-drain")
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(STREAM))
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        StringBuilder body = new StringBuilder();
        boolean counted = false;
        boolean cut = false;
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                body.append(line).append('\n');
                if (!counted && line.startsWith("data: ")) {
                    counted = true;
                    streaming.countDown();
                }
            }
        } catch (IOException e) {
            cut = true; // the connection closed mid-chunk
        } finally {
            if (!counted) {
                streaming.countDown(); // not streaming: let the test go on and fail on the status
            }
        }
        return new Read(response.statusCode(), body.toString(), body.toString().contains("data: [DONE]"), cut);
    }

    private static void awaitOutput(GatewayProcess gateway, String text) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!gateway.output().contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the gateway never printed '" + text + "' alive=" + gateway.process.isAlive()
                        + (gateway.process.isAlive() ? "" : " exit=" + gateway.process.exitValue()) + ":\n"
                        + gateway.output());
            }
            Thread.sleep(20);
        }
    }

    /** The slots held in Redis: the members of every lease set (the store's keys ending in {@code :lease}). */
    private long inFlight() {
        long held = 0;
        if (redis.get().call("KEYS", "*:lease") instanceof List<?> keys) {
            for (Object key : keys) {
                if (redis.get().call("ZCARD", String.valueOf(key)) instanceof Long count) {
                    held += count;
                }
            }
        }
        return held;
    }

    /**
     * No slot is left in Redis, and the tenant's token window and the model's cap hold exactly the
     * tokens settled, read through a limiter of the test's own on the same Redis: a reservation left
     * unsettled would still hold its estimate there.
     */
    private void assertSettled(Drained drained, long settledTokens) throws Exception {
        assertThat(inFlight()).as("in-flight slots left in Redis").isZero();
        assertThat(redis.get().call("KEYS", "*:lease"))
                .as("lease sets left in Redis")
                .isEqualTo(List.of());
        try (GatewayStore store =
                GatewayStore.select(redis.get().uri(), null, java.time.Duration.ofSeconds(2), Runnable::run)) {
            RateLimiter limiter =
                    SlidingWindowRateLimiter.builder(store.store()).build();
            List<Decision.Usage> tenant =
                    limiter.usage(TENANT, drained.config.tiers().get("t").tier());
            assertThat(used(tenant, "tokens-minute")).isEqualTo(settledTokens);
            long committed = drained.lines.stream()
                    .filter(line -> line.path("settledTokens").asLong() > 0)
                    .count();
            assertThat(used(tenant, "minute"))
                    .as("a committed request keeps its request, a cancelled one gives it back")
                    .isEqualTo(committed);
            List<Decision.Usage> cap =
                    limiter.usage(drained.config.models().get("gpt-4o-mini").budget());
            assertThat(used(cap, "tpm")).isEqualTo(settledTokens);
        }
    }

    private static long used(List<Decision.Usage> usage, String window) {
        return usage.stream()
                .filter(u -> u.window().name().equals(window))
                .mapToLong(Decision.Usage::used)
                .findFirst()
                .orElseThrow(() -> new AssertionError("no window " + window + " in " + usage));
    }
}
