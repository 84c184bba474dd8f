package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.testsupport.RefusedPort;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every way a metered response can end, against a stub upstream the test controls: each settles
 * the admission exactly once, commits what the upstream produced or cancels what it never did, and
 * frees the tenant's concurrency slot.
 */
@ParameterizedClass
@EnumSource(
        value = Harness.Store.class,
        names = {"MEMORY", "REDIS"})
class ReleasePathsTest {

    private static final String MODEL = "gpt-4o-mini";
    private static final String PLAIN =
            "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String STREAM =
            "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String PRO = "demo-user-pro";
    private static final long STUB_TOTAL = StubUpstream.PROMPT + StubUpstream.COMPLETION;

    @Parameter
    Harness.Store store;

    private Harness harness;
    private final TokenCounter tokens = new TokenCounter();

    @AfterEach
    void stop() throws Exception {
        if (harness != null) {
            harness.close();
        }
    }

    private Harness start() throws Exception {
        harness = Harness.start(store, true);
        return harness;
    }

    private long promptEstimate() throws Exception {
        return tokens.chatPrompt(MODEL, OpenAi.JSON.readTree(PLAIN).get("messages"));
    }

    private void awaitSettled(String outcome, String ending) throws InterruptedException {
        harness.awaitSettled(outcome, ending, PRO);
    }

    @Test
    @DisplayName("success: commits the upstream's usage; the upstream sees the gateway's key, never the client's")
    void plainSuccess() throws Exception {
        start();

        HttpResponse<String> response = harness.chat("demo-pro", PLAIN);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("x-ratelimit-remaining-requests"))
                .contains("59");
        awaitSettled("committed", "completed");
        assertThat(harness.tokens(PRO)).isEqualTo(STUB_TOTAL);
        assertThat(harness.stub().received()).singleElement().satisfies(received -> {
            assertThat(received.path()).isEqualTo("/v1/chat/completions");
            assertThat(received.authorization()).isEqualTo("Bearer " + Harness.UPSTREAM_KEY);
        });
    }

    @Test
    @DisplayName("stream end: usage is asked of the upstream, stripped for a client that did not ask, and committed")
    void streamEnd() throws Exception {
        start();

        HttpResponse<String> response = harness.chat("demo-pro", STREAM);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("text/event-stream"));
        assertThat(response.headers().firstValue("x-ratelimit-limit-requests")).contains("60");
        assertThat(response.body()).contains("\"content\":\" tok\"").endsWith("data: [DONE]\n\n");
        assertThat(response.body()).doesNotContain("\"usage\":{");
        JsonNode forwarded = harness.stub().received().get(0).body();
        assertThat(forwarded.path("stream_options").path("include_usage").asBoolean())
                .isTrue();
        awaitSettled("committed", "stream_completed");
        assertThat(harness.tokens(PRO)).isEqualTo(STUB_TOTAL);

        HttpResponse<String> asked = harness.chat(
                "demo-pro",
                STREAM.replace("\"stream\":true", "\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
        assertThat(asked.body())
                .contains("\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18}");
    }

    @Test
    @DisplayName("chunks pass through as they arrive: the client reads the first before the upstream sends the rest")
    void noBuffering() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, ended));

        try (Socket socket = openStream("demo-pro", STREAM)) {
            BufferedReader reader = reader(socket);
            String first = firstData(reader);
            assertThat(first).contains("\"content\":\" tok\"");
            assertThat(ended.getCount())
                    .as("the upstream is still holding the rest")
                    .isEqualTo(1);
            release.countDown();
            String line;
            while ((line = reader.readLine()) != null && !line.equals("data: [DONE]")) {
                // the rest of the stream
            }
            assertThat(line).isEqualTo("data: [DONE]");
        }
        awaitSettled("committed", "stream_completed");
    }

    @Test
    @DisplayName("client disconnect mid-stream: the prompt and the tokens produced are committed, the upstream aborted")
    void clientDisconnect() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.stream(3, release, StubUpstream.Then.ENDLESS, ended));

        try (Socket socket = openStream("demo-pro", STREAM)) {
            firstData(reader(socket));
        }
        release.countDown();

        awaitSettled("committed", "client_disconnected");
        assertThat(ended.await(20, TimeUnit.SECONDS))
                .as("the upstream stream was aborted")
                .isTrue();
        long atLeast = promptEstimate() + tokens.count(MODEL, StubUpstream.WORD.repeat(3));
        assertThat(harness.tokens(PRO)).isGreaterThanOrEqualTo(atLeast).isLessThan(1_024);
        assertThat(harness.settlements("cancelled", "client_disconnected")).isZero();
    }

    @Test
    @DisplayName("upstream 429: passed through with its Retry-After, and cancelled")
    void upstream429() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.status(429, Map.of("Retry-After", "7", "retry-after-ms", "6500")));

        HttpResponse<String> response = harness.chat("demo-pro", PLAIN);

        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("Retry-After")).contains("7");
        assertThat(response.headers().firstValue("retry-after-ms")).contains("6500");
        assertThat(response.headers().firstValue("x-ratelimit-remaining-requests"))
                .contains("59");
        assertThat(response.body()).contains("stub_429");
        awaitSettled("cancelled", "upstream_429");
        assertThat(harness.tokens(PRO)).isZero();
    }

    @Test
    @DisplayName("upstream 5xx: passed through, and cancelled")
    void upstream5xx() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.status(500, Map.of()));

        HttpResponse<String> response = harness.chat("demo-pro", STREAM);

        assertThat(response.statusCode()).isEqualTo(500);
        assertThat(response.body()).contains("stub_500");
        awaitSettled("cancelled", "upstream_error");
        assertThat(harness.tokens(PRO)).isZero();
    }

    @Test
    @DisplayName("upstream timeout before the first byte: 504, cancelled")
    void upstreamTimeout() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.hang(release));
        try {
            HttpResponse<String> response = harness.chat("demo-pro", PLAIN);

            assertThat(response.statusCode()).isEqualTo(504);
            assertThat(response.body()).contains("\"code\":\"upstream_timeout\"");
            awaitSettled("cancelled", "upstream_timeout");
        } finally {
            release.countDown();
        }
    }

    @Test
    @DisplayName("upstream unreachable: 502, cancelled")
    void upstreamUnreachable() throws Exception {
        try (RefusedPort closed = RefusedPort.open()) {
            harness = Harness.start(
                    store, true, Map.of("UPSTREAM_URL", "http://" + closed.host() + ":" + closed.port() + "/v1"));

            HttpResponse<String> response = harness.chat("demo-pro", STREAM);

            assertThat(response.statusCode()).isEqualTo(502);
            assertThat(response.body()).contains("\"code\":\"upstream_unreachable\"");
            awaitSettled("cancelled", "upstream_unreachable");
        }
    }

    @Test
    @DisplayName("connection dropped mid-stream: what was relayed is committed, the client gets an error event")
    void droppedMidStream() throws Exception {
        start();
        harness.stub()
                .enqueue(StubUpstream.stream(2, new CountDownLatch(0), StubUpstream.Then.DROP, new CountDownLatch(1)));

        HttpResponse<String> response = harness.chat("demo-pro", STREAM);

        assertThat(response.body()).contains("\"content\":\" tok\"").contains("\"code\":\"stream_broken\"");
        assertThat(response.body()).doesNotContain("[DONE]");
        awaitSettled("committed", "stream_broken");
        assertThat(harness.tokens(PRO)).isEqualTo(promptEstimate() + tokens.count(MODEL, StubUpstream.WORD.repeat(2)));
    }

    @Test
    @DisplayName("upstream silent mid-stream: the idle timeout ends it and what was relayed is committed")
    void stalledMidStream() throws Exception {
        start();
        harness.stub()
                .enqueue(StubUpstream.stream(2, new CountDownLatch(0), StubUpstream.Then.STALL, new CountDownLatch(1)));

        HttpResponse<String> response = harness.chat("demo-pro", STREAM);

        assertThat(response.body()).contains("\"code\":\"stream_broken\"");
        awaitSettled("committed", "stream_broken");
        assertThat(harness.tokens(PRO)).isEqualTo(promptEstimate() + tokens.count(MODEL, StubUpstream.WORD.repeat(2)));
    }

    @Test
    @DisplayName(
            "concurrency cap: long streams hold the slots, the next request gets 429 with Retry-After, ends free them")
    void concurrencyCap() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < 2; i++) {
            harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
        }
        List<Socket> streams = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Socket socket = openStream("demo-free", STREAM);
                streams.add(socket);
                firstData(reader(socket));
            }
            assertThat(harness.inFlight("demo-user-free")).isEqualTo(2);

            HttpResponse<String> third = harness.chat("demo-free", PLAIN);

            assertThat(third.statusCode()).isEqualTo(429);
            assertThat(third.headers().firstValue("Retry-After")).contains("1");
            assertThat(third.headers().firstValue("x-ratelimit-window")).contains("concurrent");
            assertThat(third.body()).contains("\"code\":\"concurrency_limit_exceeded\"", "2 requests in flight");
            release.countDown();
            for (Socket socket : streams) {
                BufferedReader reader = reader(socket);
                String line;
                while ((line = reader.readLine()) != null && !line.equals("data: [DONE]")) {
                    // drain
                }
            }
        } finally {
            release.countDown();
            for (Socket socket : streams) {
                socket.close();
            }
        }
        Harness.await("both slots free", () -> harness.inFlight("demo-user-free") == 0);
        HttpResponse<String> after = harness.chat("demo-free", PLAIN);
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.headers().firstValue("x-ratelimit-remaining-requests"))
                .as("the refused request was never charged")
                .contains("2");
    }

    @Test
    @DisplayName("concurrency cap under a burst: of 8 simultaneous requests exactly the cap's 2 are admitted")
    void concurrencyBurst() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < 8; i++) {
            harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
        }
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Integer>> statuses = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                statuses.add(pool.submit(() -> {
                    go.await();
                    HttpResponse<InputStream> response = harness.http.send(
                            harness.chatRequest("demo-free", STREAM), HttpResponse.BodyHandlers.ofInputStream());
                    CompletableFuture.runAsync(() -> {
                        try (InputStream body = response.body()) {
                            body.readAllBytes();
                        } catch (Exception e) {
                            // drained
                        }
                    });
                    return response.statusCode();
                }));
            }
            go.countDown();
            List<Integer> codes = new ArrayList<>();
            for (Future<Integer> status : statuses) {
                codes.add(status.get(30, TimeUnit.SECONDS));
            }
            assertThat(codes).filteredOn(code -> code == 200).hasSize(2);
            assertThat(codes).filteredOn(code -> code == 429).hasSize(6);
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        Harness.await("all slots free", () -> harness.inFlight("demo-user-free") == 0);
    }

    @Test
    @DisplayName("reconciliation: the next request's headers show the estimate replaced by the usage committed")
    void reconciliation() throws Exception {
        start();
        long estimate = promptEstimate() + 1_024; // the default completion reserve

        HttpResponse<String> first = harness.chat("demo-pro", PLAIN);
        HttpResponse<String> second = harness.chat("demo-pro", PLAIN);

        assertThat(first.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(Long.toString(200_000 - estimate));
        assertThat(second.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(Long.toString(200_000 - STUB_TOTAL - estimate));
        Harness.await("both settled", () -> {
            try {
                return harness.settlements("committed", "completed") == 2;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        HttpResponse<String> third = harness.chat("demo-pro", PLAIN);
        assertThat(third.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(Long.toString(200_000 - 2 * STUB_TOTAL - estimate));
    }

    @Test
    @DisplayName("cancel gives back the request and its tokens: the next request finds the budget untouched")
    void cancelGivesBack() throws Exception {
        start();
        harness.stub().enqueue(StubUpstream.status(503, Map.of()));
        long estimate = promptEstimate() + 1_024;

        assertThat(harness.chat("demo-pro", PLAIN).statusCode()).isEqualTo(503);
        awaitSettled("cancelled", "upstream_error");
        HttpResponse<String> next = harness.chat("demo-pro", PLAIN);

        assertThat(next.headers().firstValue("x-ratelimit-remaining-requests")).contains("59");
        assertThat(next.headers().firstValue("x-ratelimit-remaining-tokens"))
                .contains(Long.toString(200_000 - estimate));
    }

    @Test
    @DisplayName("token window: reservations in flight count, so a second large request gets 429 naming tokens-minute")
    void tokenWindow() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
        try (Socket held = openStream("demo-pro", STREAM.replace("{", "{\"max_tokens\":150000,"))) {
            firstData(reader(held));

            HttpResponse<String> second = harness.chat("demo-pro", PLAIN.replace("{", "{\"max_tokens\":100000,"));

            assertThat(second.statusCode()).isEqualTo(429);
            assertThat(second.headers().firstValue("x-ratelimit-window")).contains("tokens-minute");
            assertThat(second.headers().firstValue("Retry-After"))
                    .hasValueSatisfying(
                            seconds -> assertThat(Long.parseLong(seconds)).isBetween(1L, 60L));
            assertThat(second.body())
                    .contains(
                            "\"type\":\"tokens\"",
                            "\"code\":\"rate_limit_exceeded\"",
                            "tokens per minute (window 'tokens-minute')");
            release.countDown();
        } finally {
            release.countDown();
        }
    }

    @Test
    @DisplayName("a request larger than a token window can ever hold: 400 naming the window, nothing charged")
    void tooLarge() throws Exception {
        start();

        HttpResponse<String> huge = harness.chat("demo-free", PLAIN.replace("{", "{\"max_completion_tokens\":50000,"));

        assertThat(huge.statusCode()).isEqualTo(400);
        assertThat(huge.headers().firstValue("Retry-After")).isEmpty();
        assertThat(huge.body())
                .contains(
                        "\"code\":\"request_too_large\"",
                        "the limit of 20000 tokens per minute (window 'tokens-minute')",
                        "It needs an estimated");
        assertThat(harness.chat("demo-free", PLAIN).headers().firstValue("x-ratelimit-remaining-requests"))
                .contains("4");
    }

    @Test
    @DisplayName("upstream cap: one model's tokens per minute are shared, and the cap's 429 names its budget")
    void upstreamCap() throws Exception {
        start();
        CountDownLatch release = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.stream(1, release, StubUpstream.Then.FINISH, new CountDownLatch(1)));
        String gpt4o = STREAM.replace("gpt-4o-mini", "gpt-4o");
        try (Socket held = openStream("demo-enterprise", gpt4o.replace("{", "{\"max_tokens\":250000,"))) {
            firstData(reader(held));

            HttpResponse<String> other = harness.chat(
                    "demo-pro", PLAIN.replace("gpt-4o-mini", "gpt-4o").replace("{", "{\"max_tokens\":100000,"));

            assertThat(other.statusCode()).isEqualTo(429);
            assertThat(other.headers().firstValue("x-ratelimit-window")).contains("tpm");
            assertThat(other.body())
                    .contains(
                            "Too many requests: the limit of 300000 tokens per", "of the shared budget 'model:gpt-4o'");
            assertThat(harness.chat("demo-pro", PLAIN).statusCode())
                    .as("another model's cap is not touched")
                    .isEqualTo(200);
            release.countDown();
        } finally {
            release.countDown();
        }
    }

    private Socket openStream(String key, String body) throws Exception {
        return harness.openStream("/v1/chat/completions", key, body);
    }

    private final Map<Socket, BufferedReader> readers = new java.util.HashMap<>();

    private BufferedReader reader(Socket socket) {
        return readers.computeIfAbsent(socket, s -> {
            try {
                return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    /** Reads the status line and headers, then up to the first {@code data:} line; chunk sizes are skipped. */
    private static String firstData(BufferedReader reader) throws Exception {
        String status = reader.readLine();
        assertThat(status).startsWith("HTTP/1.1 200");
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.startsWith("data: ")) {
                return line;
            }
        }
        throw new AssertionError("the stream ended before its first event");
    }
}
