package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Every way a Messages API response can end, against an Anthropic stub the test controls, and the
 * routing by model between the {@code openai} and {@code anthropic} upstreams: each admitted
 * request settles exactly once, with the upstream's usage or what was relayed, or nothing.
 */
class AnthropicEndingsTest extends UpstreamsTest {

    private static final String PRO = "demo-user-pro";
    private static final long INPUT = AnthropicStub.INPUT + AnthropicStub.CACHE_WRITE + AnthropicStub.CACHE_READ;

    private void awaitSettled(String outcome, String ending) throws InterruptedException {
        Harness.await(outcome + " " + ending, () -> {
            try {
                return harness.settlements(outcome, ending) == 1;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Harness.await("the slot is free", () -> harness.inFlight(PRO) == 0);
    }

    @Test
    @DisplayName(
            "plain: usage with cache tokens is charged; the upstream sees its own key and the client's version and beta")
    void plain() throws Exception {
        upstreams.anthropic.enqueue(
                AnthropicStub.ok(Upstreams.headers("anthropic-ratelimit-requests-remaining", "999")));

        HttpResponse<String> response = Upstreams.messages(
                harness, "demo-pro", Upstreams.body(MODEL, false), "anthropic-beta", "tools-2024-05-16");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"type\":\"message\"");
        assertThat(response.headers().firstValue("anthropic-ratelimit-requests-remaining"))
                .as("the gateway's count of the tenant's budget, not the upstream's")
                .contains("59");
        awaitSettled("committed", "completed");
        assertThat(harness.tokens(PRO)).isEqualTo(AnthropicStub.TOTAL);
        assertThat(upstreams.anthropic.received()).singleElement().satisfies(received -> {
            assertThat(received.path()).isEqualTo("/v1/messages");
            assertThat(received.header("x-api-key")).isEqualTo(Upstreams.ANTHROPIC_KEY);
            assertThat(received.header("authorization")).isNull();
            assertThat(received.header("anthropic-version")).isEqualTo("2023-06-01");
            assertThat(received.header("anthropic-beta")).isEqualTo("tools-2024-05-16");
        });
    }

    @Test
    @DisplayName("stream: events pass through as they arrive and message_start + message_delta usage is charged")
    void streamCompleted() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        upstreams.anthropic.enqueue(AnthropicStub.stream(1, release, AnthropicStub.Then.FINISH, ended));

        try (Socket socket = openStream("demo-pro")) {
            BufferedReader reader = reader(socket);
            assertThat(readUntil(reader, "content_block_delta")).isTrue();
            assertThat(ended.getCount()).as("the upstream still holds the rest").isEqualTo(1);
            release.countDown();
            assertThat(readUntil(reader, "event: message_stop")).isTrue();
        }
        awaitSettled("committed", "stream_completed");
        assertThat(harness.tokens(PRO)).isEqualTo(INPUT + AnthropicStub.OUTPUT);
    }

    @Test
    @DisplayName("client disconnect mid-stream: the upstream is aborted and the input plus what was relayed is charged")
    void clientDisconnect() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        upstreams.anthropic.enqueue(AnthropicStub.stream(2, release, AnthropicStub.Then.ENDLESS, ended));
        try (Socket socket = openStream("demo-pro")) {
            assertThat(readUntil(reader(socket), "content_block_delta")).isTrue();
        }
        release.countDown();
        assertThat(ended.await(20, TimeUnit.SECONDS))
                .as("the gateway aborted the upstream")
                .isTrue();
        awaitSettled("committed", "client_disconnected");
        assertThat(harness.tokens(PRO)).isGreaterThan(INPUT);
    }

    @Test
    @DisplayName("broken stream: the input and the relayed text are charged, and the client gets an error event")
    void brokenStream() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        release.countDown();
        upstreams.anthropic.enqueue(AnthropicStub.stream(2, release, AnthropicStub.Then.DROP, new CountDownLatch(1)));

        HttpResponse<String> response = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, true));

        assertThat(response.body())
                .endsWith(
                        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\","
                                + "\"message\":\"The upstream's stream broke off before it finished; the answer is incomplete.\"}}\n\n");
        awaitSettled("committed", "stream_broken");
        assertThat(harness.tokens(PRO)).isEqualTo(INPUT + new AnthropicTokens().text(AnthropicStub.WORD.repeat(2)));
    }

    @Test
    @DisplayName("an error event mid-stream is relayed; what was produced is charged, an error before any text cancels")
    void errorEvent() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        release.countDown();
        upstreams.anthropic.enqueue(
                AnthropicStub.stream(2, release, AnthropicStub.Then.ERROR_EVENT, new CountDownLatch(1)));

        HttpResponse<String> response = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, true));

        assertThat(response.body())
                .contains("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"");
        awaitSettled("committed", "stream_error");
        assertThat(harness.tokens(PRO)).isEqualTo(INPUT + new AnthropicTokens().text(AnthropicStub.WORD.repeat(2)));

        upstreams.anthropic.enqueue(
                AnthropicStub.stream(0, release, AnthropicStub.Then.ERROR_EVENT, new CountDownLatch(1)));
        Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, true));
        awaitSettled("cancelled", "stream_error");
    }

    @Test
    @DisplayName("529 passes through as overloaded_error, uncharged; without a retry time it starts no cooldown")
    void overloaded() throws Exception {
        upstreams.anthropic.enqueue(AnthropicStub.status(529, Map.of()));

        HttpResponse<String> response = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));

        assertThat(response.statusCode()).isEqualTo(529);
        assertThat(response.body()).contains("\"type\":\"overloaded_error\"");
        awaitSettled("cancelled", "upstream_529");
        HttpResponse<String> next = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));
        assertThat(next.statusCode()).isEqualTo(200);
        assertThat(next.headers().firstValue("anthropic-ratelimit-requests-remaining"))
                .as("the 529 was not charged")
                .contains("59");
        assertThat(upstreams.anthropic.received()).hasSize(2);
    }

    @Test
    @DisplayName("the upstream's 429 passes through with its retry-after, uncharged, and the model cools down")
    void upstream429() throws Exception {
        upstreams.anthropic.enqueue(AnthropicStub.status(429, Map.of("retry-after", "20")));

        HttpResponse<String> response = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));

        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("retry-after")).contains("20");
        assertThat(response.body()).contains("\"type\":\"rate_limit_error\"");
        awaitSettled("cancelled", "upstream_429");

        HttpResponse<String> held = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));
        assertThat(held.statusCode()).isEqualTo(429);
        assertThat(held.headers().firstValue("retry-after")).contains("20");
        assertThat(held.body())
                .contains("\"rate_limit_error\"", "asked the gateway to slow down", "nothing was charged");
        assertThat(upstreams.anthropic.received())
                .as("held back by the gateway")
                .hasSize(1);
        assertThat(harness.metric("gateway_upstream_cooldowns_total", "upstream", "anthropic", "model", MODEL))
                .isEqualTo(1);
        assertThat(harness.admin("/status.json").body())
                .contains("\"cooldowns\":[{\"upstream\":\"anthropic\",\"model\":\"claude-sonnet-4-5\"");
        HttpResponse<String> other = Upstreams.messages(harness, "demo-pro", Upstreams.body("claude-haiku-4-5", false));
        assertThat(other.statusCode()).as("another model is not held back").isEqualTo(200);
        assertThat(other.headers().firstValue("anthropic-ratelimit-requests-remaining"))
                .as("neither refusal was charged")
                .contains("59");
    }

    @Test
    @DisplayName(
            "models are routed by upstream and protocol; one nobody serves is a 404 in the caller's shape, uncharged")
    void routing() throws Exception {
        HttpResponse<String> gpt = Upstreams.messages(harness, "demo-pro", Upstreams.body("gpt-4o", false));
        assertThat(gpt.statusCode()).isEqualTo(404);
        assertThat(gpt.body()).contains("\"type\":\"not_found_error\"", "served over OpenAI's API");

        HttpResponse<String> claude = harness.chat(
                "demo-pro", "{\"model\":\"claude-sonnet-4-5\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(claude.statusCode()).isEqualTo(404);
        assertThat(claude.body()).contains("\"code\":\"model_not_found\"", "Anthropic's Messages API");

        HttpResponse<String> unknown = Upstreams.messages(harness, "demo-pro", Upstreams.body("mistral-large", false));
        assertThat(unknown.statusCode()).isEqualTo(404);

        HttpResponse<String> chat = harness.chat(
                "demo-pro", "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(chat.statusCode()).isEqualTo(200);
        assertThat(chat.headers().firstValue("x-ratelimit-remaining-requests"))
                .as("the 404s were not charged")
                .contains("59");
        assertThat(upstreams.openai.received())
                .singleElement()
                .satisfies(
                        received -> assertThat(received.authorization()).isEqualTo("Bearer " + Harness.UPSTREAM_KEY));
        assertThat(upstreams.anthropic.received()).isEmpty();
    }

    @Test
    @DisplayName("bad input is a 400 invalid_request_error, a missing key a 401 authentication_error, neither charged")
    void refusals() throws Exception {
        HttpResponse<String> noMax = Upstreams.messages(
                harness, "demo-pro", "{\"model\":\"claude-x\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
        assertThat(noMax.statusCode()).isEqualTo(400);
        assertThat(noMax.body())
                .isEqualTo("{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                        + "\"message\":\"max_tokens: Field required\"}}");
        HttpResponse<String> badRole = Upstreams.messages(
                harness,
                "demo-pro",
                "{\"model\":\"claude-x\",\"max_tokens\":5,\"messages\":[{\"role\":\"system\",\"content\":\"Hi\"}]}");
        assertThat(badRole.body()).contains("messages.0.role");

        HttpResponse<String> noKey = Upstreams.messages(harness, null, Upstreams.body(MODEL, false));
        assertThat(noKey.statusCode()).isEqualTo(401);
        assertThat(noKey.body()).contains("\"type\":\"authentication_error\"");

        HttpResponse<String> bearer =
                Upstreams.messages(harness, null, Upstreams.body(MODEL, false), "Authorization", "Bearer demo-pro");
        assertThat(bearer.statusCode()).isEqualTo(200);
        assertThat(bearer.headers().firstValue("anthropic-ratelimit-requests-remaining"))
                .contains("59");

        HttpResponse<String> huge = Upstreams.messages(
                harness,
                "demo-free",
                Upstreams.body(MODEL, false).replace("\"max_tokens\":100", "\"max_tokens\":50000"));
        assertThat(huge.statusCode()).isEqualTo(400);
        assertThat(huge.body()).contains("invalid_request_error", "lower max_tokens");

        HttpResponse<String> large = Upstreams.messages(harness, "demo-pro", "{\"pad\":\"" + "x".repeat(5_000) + "\"}");
        assertThat(large.statusCode()).isEqualTo(413);
        assertThat(large.body()).contains("\"type\":\"request_too_large\"");
    }

    @Test
    @DisplayName("the upstream refusing the gateway's own key is a 502 api_error, not the client's 401")
    void upstreamAuth() throws Exception {
        upstreams.anthropic.enqueue(AnthropicStub.status(401, Map.of()));

        HttpResponse<String> response = Upstreams.messages(harness, "demo-pro", Upstreams.body(MODEL, false));

        assertThat(response.statusCode()).isEqualTo(502);
        assertThat(response.body()).contains("\"type\":\"api_error\"", "the gateway's credentials");
        awaitSettled("cancelled", "upstream_error");
    }

    private Socket openStream(String key) throws Exception {
        Socket socket = new Socket("127.0.0.1", harness.server.port());
        socket.setSoTimeout(20_000);
        byte[] bytes = Upstreams.body(MODEL, true).getBytes(StandardCharsets.UTF_8);
        OutputStream out = socket.getOutputStream();
        out.write(("POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: " + key
                        + "\r\nanthropic-version: 2023-06-01\r\nContent-Type: application/json\r\nContent-Length: "
                        + bytes.length + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
        return socket;
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

    private static boolean readUntil(BufferedReader reader, String text) throws Exception {
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.contains(text)) {
                return true;
            }
        }
        return false;
    }
}
