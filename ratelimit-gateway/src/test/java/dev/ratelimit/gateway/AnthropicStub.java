package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * An Anthropic Messages API upstream the tests script: each request takes the next queued
 * behaviour, or a plain answer (streamed if asked) with known usage. It records what it received.
 */
final class AnthropicStub extends QueuedStub<AnthropicStub.Behaviour, AnthropicStub.Received> {

    static final int INPUT = 11;
    static final int CACHE_WRITE = 2;
    static final int CACHE_READ = 3;
    static final int OUTPUT = 7;
    static final int TOTAL = INPUT + CACHE_WRITE + CACHE_READ + OUTPUT;
    static final String WORD = " tok";

    /** What the stub saw of one request. */
    record Received(String method, String path, Map<String, String> headers, JsonNode body) {

        @Nullable
        String header(String name) {
            return headers.get(name);
        }
    }

    @FunctionalInterface
    interface Behaviour {
        void answer(JsonNode body, HttpServletResponse response) throws Exception;
    }

    private final AnthropicBatchStub batches = new AnthropicBatchStub();

    private AnthropicStub() throws Exception {}

    /** Anthropic's Message Batches, which the test moves through their states. */
    AnthropicBatchStub batches() {
        return batches;
    }

    static AnthropicStub start() throws Exception {
        return new AnthropicStub();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port() + "/v1";
    }

    @Override
    void serve(HttpServletRequest request, HttpServletResponse response) throws IOException {
        JsonNode body = body(request);
        Map<String, String> headers = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (String name : List.of("x-api-key", "authorization", "anthropic-version", "anthropic-beta")) {
            String value = request.getHeader(name);
            if (value != null) {
                headers.put(name, value);
            }
        }
        Received seen = new Received(request.getMethod(), request.getRequestURI(), headers, body);
        if (batches.serve(request.getMethod(), request.getRequestURI(), body, response)) {
            received().add(seen);
            return;
        }
        Behaviour behaviour = next(seen);
        try {
            (behaviour == null ? ok(Map.of()) : behaviour).answer(body, response);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    /** An answer with usage {@link #TOTAL} (cache tokens included), plain or streamed, with {@code headers}. */
    static Behaviour ok(Map<String, String> headers) {
        return (body, response) -> {
            headers.forEach(response::setHeader);
            if (body.path("stream").asBoolean(false)) {
                ServletOutputStream out = startStream(response);
                for (int i = 0; i < OUTPUT; i++) {
                    delta(out);
                }
                finish(out);
                return;
            }
            ObjectNode answer = message(
                    body.path("model").asText(), WORD.repeat(OUTPUT).strip(), INPUT, CACHE_READ, CACHE_WRITE, OUTPUT);
            write(response, 200, Map.of(), answer.toString());
        };
    }

    /** A plain answer reporting this usage: fresh input, cache reads, cache writes and output. */
    static Behaviour usage(long input, long cacheRead, long cacheWrite, long output) {
        return (body, response) -> write(
                response,
                200,
                Map.of(),
                message(body.path("model").asText(), "ok", input, cacheRead, cacheWrite, output)
                        .toString());
    }

    /** A Messages API answer of {@code text} reporting this usage: fresh input, cache reads, cache writes and output. */
    static ObjectNode message(String model, String text, long input, long cacheRead, long cacheWrite, long output) {
        ObjectNode answer = OpenAi.JSON
                .createObjectNode()
                .put("id", "msg_stub")
                .put("type", "message")
                .put("role", "assistant")
                .put("model", model);
        answer.putArray("content").addObject().put("type", "text").put("text", text);
        answer.put("stop_reason", "end_turn").putNull("stop_sequence");
        answer.putObject("usage")
                .put("input_tokens", input)
                .put("cache_creation_input_tokens", cacheWrite)
                .put("cache_read_input_tokens", cacheRead)
                .put("output_tokens", output);
        return answer;
    }

    /**
     * {@code gateway-money.yaml} with a price for {@code claude-money*} ($1 fresh input, $0.10 cache
     * reads, $1.25 cache writes and $5 output per million tokens), {@code limits} added under its
     * {@code limits:}, and this stub as the {@code anthropic} upstream of {@code claude-*} after
     * {@code upstreams} (more entries of {@code upstreams:}, or none).
     */
    String moneyConfig(String limits, String upstreams) throws Exception {
        String money = java.nio.file.Files.readString(java.nio.file.Path.of(
                SpendTest.class.getResource("gateway-money.yaml").toURI()));
        return money.replace(
                                "prices:\n",
                                "prices:\n  claude-money*: { input: 1.00, cached-input: 0.10, cache-write: 1.25, output: 5.00 }\n")
                        .replace("\nlimits:\n", "\nlimits:\n" + limits)
                + "\nupstreams:\n" + upstreams
                + """
                  anthropic:
                    url: %s
                    api-key: sk-ant-upstream
                    protocol: anthropic
                    models: ["claude-*"]
                """.formatted(baseUrl());
    }

    /** Answers with a status, headers and an Anthropic-shaped error body. */
    static Behaviour status(int status, Map<String, String> headers) {
        return (body, response) -> write(
                response,
                status,
                headers,
                Anthropic.errorBody(Anthropic.type(status), "stub says " + status)
                        .toString());
    }

    /** What a waiting stream does once released. */
    enum Then {
        FINISH,
        /** Breaks the connection without finishing the stream. */
        DROP,
        /** Sends an {@code error} event ({@code overloaded_error}) and ends the stream. */
        ERROR_EVENT,
        /** Sends deltas until a write fails, that is until the gateway aborts it. */
        ENDLESS
    }

    /** {@code message_start}, {@code chunks} deltas, then waits for {@code release} and does {@code then}. */
    static Behaviour stream(int chunks, CountDownLatch release, Then then, CountDownLatch ended) {
        return (body, response) -> {
            try {
                ServletOutputStream out = startStream(response);
                for (int i = 0; i < chunks; i++) {
                    delta(out);
                }
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the stream");
                }
                switch (then) {
                    case FINISH -> finish(out);
                    case DROP -> throw new IllegalStateException("stub drops the connection mid-stream");
                    case ERROR_EVENT -> event(out, "error", Anthropic.errorBody("overloaded_error", "Overloaded"));
                    case ENDLESS -> {
                        for (int i = 0; i < 30_000; i++) {
                            delta(out);
                            Thread.sleep(1);
                        }
                    }
                }
            } finally {
                ended.countDown();
            }
        };
    }

    private static ServletOutputStream startStream(HttpServletResponse response) throws IOException {
        response.setStatus(200);
        response.setContentType("text/event-stream");
        ServletOutputStream out = response.getOutputStream();
        ObjectNode start = OpenAi.JSON.createObjectNode().put("type", "message_start");
        ObjectNode message = start.putObject("message")
                .put("id", "msg_stub")
                .put("type", "message")
                .put("role", "assistant")
                .put("model", "claude-stub");
        message.putArray("content");
        message.putObject("usage")
                .put("input_tokens", INPUT)
                .put("cache_creation_input_tokens", CACHE_WRITE)
                .put("cache_read_input_tokens", CACHE_READ)
                .put("output_tokens", 1);
        event(out, "message_start", start);
        ObjectNode block = OpenAi.JSON
                .createObjectNode()
                .put("type", "content_block_start")
                .put("index", 0);
        block.putObject("content_block").put("type", "text").put("text", "");
        event(out, "content_block_start", block);
        event(out, "ping", OpenAi.JSON.createObjectNode().put("type", "ping"));
        return out;
    }

    private static void delta(ServletOutputStream out) throws IOException {
        ObjectNode delta = OpenAi.JSON
                .createObjectNode()
                .put("type", "content_block_delta")
                .put("index", 0);
        delta.putObject("delta").put("type", "text_delta").put("text", WORD);
        event(out, "content_block_delta", delta);
    }

    private static void finish(ServletOutputStream out) throws IOException {
        event(
                out,
                "content_block_stop",
                OpenAi.JSON.createObjectNode().put("type", "content_block_stop").put("index", 0));
        ObjectNode end = OpenAi.JSON.createObjectNode().put("type", "message_delta");
        end.putObject("delta").put("stop_reason", "end_turn").putNull("stop_sequence");
        end.putObject("usage").put("output_tokens", OUTPUT);
        event(out, "message_delta", end);
        event(out, "message_stop", OpenAi.JSON.createObjectNode().put("type", "message_stop"));
    }

    private static void event(ServletOutputStream out, String name, ObjectNode data) throws IOException {
        out.write(("event: " + name + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    private static void write(HttpServletResponse response, int status, Map<String, String> headers, String body)
            throws IOException {
        response.setStatus(status);
        headers.forEach(response::setHeader);
        response.setContentType("application/json");
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }
}
