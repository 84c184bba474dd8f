package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.metrics.GatewayMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The relay needs no thread per stream: 500 streams are held open through a gateway whose one pool
 * has 16 threads ({@code server.max-threads: 16}), all at once, and each completes with its usage
 * and settles exactly. A relay that read the upstream on a thread of its own could hold a dozen.
 * Over HTTP/1.1 each stream holds an upstream connection; with {@code UPSTREAM_HTTP_VERSION=2} (h2c)
 * the 500 share a few (the stub allows 128 streams per connection).
 */
@ParameterizedClass
@MethodSource("cases")
class ConcurrentStreamsTest {

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(Harness.Store.MEMORY, "1.1"),
                Arguments.of(Harness.Store.REDIS, "1.1"),
                Arguments.of(Harness.Store.REDIS, "2"));
    }

    private static final int STREAMS = 500;
    private static final int THREADS = 16;
    private static final String TENANT = "bulk";
    private static final String STREAM = "{\"model\":\"gpt-4o-mini\",\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String USAGE = "\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18}";

    @Parameter(0)
    Harness.Store store;

    @Parameter(1)
    String httpVersion;

    private Harness harness;

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    @Test
    @DisplayName("500 streams held at once on 16 threads: each completes with its usage and settles exactly")
    void fiveHundredStreams() throws Exception {
        Path config = Harness.config(
                Map.of(
                        "keys:\n",
                        "keys:\n  - key: bulk-key\n    tenant: bulk\n    tier: bulk\n",
                        "tiers:\n",
                        "tiers:\n  bulk:\n    max-concurrent: 1000\n    windows:\n      minute: 1000/1m\n"
                                + "      tokens-minute: 10000000 tokens/1m\n",
                        // the stub starts a thread per stream: 500 take a while
                        "upstream-first-byte-timeout-ms: 1500",
                        "upstream-first-byte-timeout-ms: 60000",
                        // the streams wait, silent, until all are open
                        "upstream-idle-timeout-ms: 1500",
                        "upstream-idle-timeout-ms: 120000"),
                "server:\n  max-threads: " + THREADS + "\n");
        harness = Harness.start(
                store, true, Map.of("GATEWAY_CONFIG", config.toString(), "UPSTREAM_HTTP_VERSION", httpVersion));
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(STREAMS);
        for (int i = 0; i < STREAMS; i++) {
            harness.stub().enqueue(StubUpstream.stream(3, release, StubUpstream.Then.FINISH, ended));
        }
        QueuedThreadPool pool = harness.server.threadPool();
        GatewayMetrics.Relays relays = harness.server.gateway().metrics().relays();
        HttpClient clients =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        long started = System.nanoTime();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        try {
            for (int i = 0; i < STREAMS; i++) {
                responses.add(clients.sendAsync(
                        HttpRequest.newBuilder(URI.create(harness.base() + "/v1/chat/completions"))
                                .timeout(Duration.ofSeconds(120))
                                .header("Authorization", "Bearer bulk-key")
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(STREAM))
                                .build(),
                        HttpResponse.BodyHandlers.ofString()));
            }

            // every stream admitted, answered by the upstream and relaying, none finished: all open at once
            try {
                await("500 relays in flight", () -> relays.active() == STREAMS);
            } catch (AssertionError e) {
                Map<String, Integer> states = new java.util.TreeMap<>();
                for (CompletableFuture<HttpResponse<String>> future : responses) {
                    String state = !future.isDone()
                            ? "open"
                            : future.isCompletedExceptionally()
                                    ? future.handle((r, x) -> String.valueOf(x)).join()
                                    : "done " + future.join().statusCode() + " "
                                            + future.join().body().length();
                    states.merge(state, 1, Integer::sum);
                }
                throw new AssertionError(e.getMessage() + ": relays " + relays.active() + ", admitted "
                        + harness.server.gateway().admission().open() + ", upstream received "
                        + harness.stub().received().size() + ", pool " + pool + ", clients " + states
                        + ", refusals "
                        + harness.admin("/metrics")
                                .body()
                                .lines()
                                .filter(l -> l.startsWith("gateway_refusals") || l.startsWith("gateway_settlements"))
                                .toList());
            }
            long held = System.nanoTime();
            int upstreamConnections = harness.stub().connections();
            if (httpVersion.equals("2")) {
                assertThat(upstreamConnections)
                        .as("500 streams multiplexed on HTTP/2 connections")
                        .isBetween(1, 16);
            } else {
                assertThat(upstreamConnections).as("a connection per stream").isGreaterThanOrEqualTo(STREAMS);
            }
            int admitted = harness.server.gateway().admission().open();
            int threads = pool.getThreads();
            int busy = pool.getBusyThreads();
            assertThat(admitted).isEqualTo(STREAMS);
            assertThat(harness.inFlight(TENANT)).isEqualTo(STREAMS);
            assertThat(pool.getMaxThreads()).isEqualTo(THREADS);
            assertThat(threads).isLessThanOrEqualTo(THREADS);
            assertThat(ended.getCount()).as("no stream has finished").isEqualTo(STREAMS);
            release.countDown();

            for (CompletableFuture<HttpResponse<String>> future : responses) {
                HttpResponse<String> response = future.get(120, TimeUnit.SECONDS);
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body())
                        .contains("\"content\":\" tok\"", USAGE)
                        .endsWith("data: [DONE]\n\n");
            }
            long done = System.nanoTime();
            await("500 settlements", () -> {
                try {
                    return harness.settlements("committed", "stream_completed") == STREAMS;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            long total = StubUpstream.PROMPT + StubUpstream.COMPLETION;
            assertThat(harness.used(TENANT, "tokens-minute")).isEqualTo(STREAMS * total);
            assertThat(harness.used(TENANT, "minute")).isEqualTo(STREAMS);
            assertThat(harness.tokens(TENANT)).isEqualTo((double) STREAMS * total);
            await("every slot free", () -> harness.inFlight(TENANT) == 0);
            System.out.printf(
                    "ConcurrentStreamsTest[%s, HTTP/%s upstream]: %d streams held at once by a pool of %d threads"
                            + " (%d started, %d busy) on %d upstream connections;"
                            + " all open after %d ms, all answered %d ms after their release%n",
                    store,
                    httpVersion,
                    STREAMS,
                    pool.getMaxThreads(),
                    threads,
                    busy,
                    upstreamConnections,
                    (held - started) / 1_000_000,
                    (done - held) / 1_000_000);
        } finally {
            release.countDown();
        }
    }

    /** Waits for a condition of the server's, as {@link Harness#await} does, with room for 500 connections. */
    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still waiting for: " + what);
            }
            Thread.sleep(10);
        }
    }
}
