package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.metrics.GatewayMetrics;
import java.io.BufferedInputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client that reads slowly pauses the upstream: the stream's relay holds at most {@code
 * limits.stream-buffer-bytes} (here 16 KiB) plus one read of the upstream, stops reading from the
 * upstream while it does, and resumes when the client reads; the answer arrives whole and settles
 * as usual, over HTTP/1.1 and HTTP/2 to the upstream alike (there the stream's receive window is the
 * bound too). A client that takes nothing for {@code server.client-idle-timeout-ms} is gone.
 */
class BackpressureTest {

    private static final int BOUND = 16 * 1024;
    /** 64 MB: more than the sockets' buffers on the way can hold (Linux grows one to 32 MB). */
    private static final int EVENTS = 64 * 1024;

    private static final int CHARS = 1_000;
    private static final String STREAM =
            "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
    private static final String PRO = "demo-user-pro";

    private Harness harness;

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
    }

    private Harness start(String server) throws Exception {
        return start(server, "1.1");
    }

    private Harness start(String server, String httpVersion) throws Exception {
        Path config = Harness.config(
                Map.of(
                        "limits:\n",
                        "limits:\n  stream-buffer-bytes: " + BOUND + "\n",
                        // silence of the upstream is not what these tests are about
                        "upstream-idle-timeout-ms: 1500",
                        "upstream-idle-timeout-ms: 30000"),
                server);
        harness = Harness.start(
                Harness.Store.MEMORY,
                true,
                Map.of("GATEWAY_CONFIG", config.toString(), "UPSTREAM_HTTP_VERSION", httpVersion));
        return harness;
    }

    @ParameterizedTest(name = "HTTP/{0} upstream")
    @ValueSource(strings = {"1.1", "2"})
    @DisplayName("a client that stops reading pauses the upstream with a bounded buffer; reading again resumes it,"
            + " and the whole answer arrives and settles")
    void slowClientPausesTheUpstream(String httpVersion) throws Exception {
        start("", httpVersion);
        GatewayMetrics.Relays relays = harness.server.gateway().metrics().relays();
        AtomicLong written = new AtomicLong();
        CountDownLatch ended = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.flood(EVENTS, CHARS, written, ended));

        try (Socket socket = RawHttp.connect(harness.server.port(), 4096)) {
            RawHttp.post(socket, "/v1/chat/completions", "demo-pro", STREAM);
            // the client reads nothing: once its socket and the gateway's are full, the relay holds
            // what it read and stops reading from the upstream
            Harness.await("the relay pauses the upstream", () -> relays.paused() == 1);

            assertThat(relays.peak())
                    .as("the most bytes the relay held: its bound, one read of the upstream (16 KiB) and one event")
                    .isLessThanOrEqualTo(BOUND + 16 * 1024 + 2 * CHARS);
            assertThat(ended.getCount())
                    .as("the upstream has not sent its answer")
                    .isEqualTo(1);
            assertThat(written.get()).as("chunks the upstream got out").isLessThan(EVENTS);
            System.out.printf(
                    "BackpressureTest[HTTP/%s]: paused holding at most %d bytes (bound %d); the upstream had got %d of"
                            + " %d chunks out%n",
                    httpVersion, relays.peak(), BOUND, written.get(), EVENTS);

            Events events = new Events();
            RawHttp.Answer answer = RawHttp.read(new BufferedInputStream(socket.getInputStream()), events);

            assertThat(answer.status()).isEqualTo(200);
            assertThat(events.tail()).endsWith("data: [DONE]\n\n");
            assertThat(events.count)
                    .as("every chunk once, the last chunk and [DONE]")
                    .isEqualTo(EVENTS + 2);
        }
        assertThat(ended.await(20, TimeUnit.SECONDS)).isTrue();
        harness.awaitSettled("committed", "stream_completed", PRO);
        assertThat(harness.tokens(PRO)).isEqualTo(StubUpstream.PROMPT + StubUpstream.COMPLETION);
        assertThat(relays.paused()).isZero();
        assertThat(relays.peak()).isLessThanOrEqualTo(BOUND + 16 * 1024 + 2 * CHARS);
    }

    /** Counts the events of a body as it arrives (each ends with a blank line) and keeps its end. */
    private static final class Events extends java.io.OutputStream {
        private final byte[] tail = new byte[64];
        private long bytes;
        private int previous = -1;
        long count;

        @Override
        public void write(int b) {
            if (b == '\n' && previous == '\n') {
                count++;
            }
            previous = b;
            tail[(int) (bytes++ % tail.length)] = (byte) b;
        }

        String tail() {
            StringBuilder text = new StringBuilder();
            for (long i = Math.max(0, bytes - tail.length); i < bytes; i++) {
                text.append((char) tail[(int) (i % tail.length)]);
            }
            return text.toString();
        }
    }

    @Test
    @DisplayName("a client that takes nothing for server.client-idle-timeout-ms is gone: the upstream is aborted and"
            + " what was read is committed")
    void clientIdleTimeout() throws Exception {
        start("server:\n  client-idle-timeout-ms: 300\n");
        AtomicLong written = new AtomicLong();
        CountDownLatch ended = new CountDownLatch(1);
        harness.stub().enqueue(StubUpstream.flood(Integer.MAX_VALUE, CHARS, written, ended));

        try (Socket socket = RawHttp.connect(harness.server.port(), 4096)) {
            RawHttp.post(socket, "/v1/chat/completions", "demo-pro", STREAM);

            harness.awaitSettled("committed", "client_disconnected", PRO);
            assertThat(ended.await(20, TimeUnit.SECONDS))
                    .as("the upstream stream was aborted")
                    .isTrue();
            assertThat(harness.tokens(PRO)).isGreaterThan(StubUpstream.PROMPT);
        }
    }

    @Test
    @DisplayName("an upstream slower than server.client-idle-timeout-ms is waited for: the client's timeout is its own"
            + " silence, not the upstream's")
    void slowUpstreamOutlivesTheClientIdleTimeout() throws Exception {
        start("server:\n  client-idle-timeout-ms: 300\n");
        harness.stub().enqueue(StubUpstream.slowStream(3, 1_000)); // silent for 1 s between chunks

        var response = harness.chat("demo-pro", STREAM);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).endsWith("data: [DONE]\n\n").doesNotContain("stream_broken");
        harness.awaitSettled("committed", "stream_completed", PRO);
    }
}
