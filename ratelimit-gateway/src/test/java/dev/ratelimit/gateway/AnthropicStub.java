package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.fakemodel.Call;
import dev.ratelimit.fakemodel.Exchange;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.fakemodel.Usage;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Anthropic's Messages API as the gateway's tests script it, on the project's one fake model ({@link
 * FakeModel}): each request takes the next queued behaviour, or a plain answer (streamed if asked)
 * with known usage; Message Batches are the fake's. It records what it received.
 */
final class AnthropicStub implements AutoCloseable {

    static final int INPUT = 11;
    static final int CACHE_WRITE = 2;
    static final int CACHE_READ = 3;
    static final int OUTPUT = 7;
    static final int TOTAL = INPUT + CACHE_WRITE + CACHE_READ + OUTPUT;
    static final String WORD = " tok";

    /** What the stub saw of one request. */
    record Received(String method, String path, Map<String, String> headers, JsonNode body) {

        static Received of(Call call) {
            Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            headers.putAll(call.headers());
            return new Received(call.method(), call.path(), headers, call.body());
        }

        @Nullable
        String header(String name) {
            return headers.get(name);
        }
    }

    /** How the stub answers one request: an Anthropic-shaped answer written to the fake's exchange. */
    @FunctionalInterface
    interface Behaviour {
        void answer(JsonNode body, Exchange response) throws Exception;
    }

    /** Anthropic's Message Batches, which the test moves through their states. */
    final class Batches {

        /** Ends the batch with every request succeeded, each reporting this usage. */
        void succeed(String id, long input, long cacheRead, long cacheWrite, long output) {
            fake.anthropicBatches()
                    .succeed(id, new Usage(input + cacheRead + cacheWrite, output, cacheRead, cacheWrite, 0));
        }

        /** Ends the batch with every request's result of {@code type}. */
        void end(String id, String type) {
            fake.anthropicBatches().end(id, type);
        }
    }

    private final FakeModel fake;
    private final Batches batches = new Batches();

    private AnthropicStub(FakeModel fake) {
        this.fake = fake;
    }

    static AnthropicStub start() {
        return new AnthropicStub(FakeModel.builder()
                .name("anthropic-stub")
                .answer((call, exchange) -> ok(Map.of()).answer(call.body(), exchange))
                .start());
    }

    Batches batches() {
        return batches;
    }

    String baseUrl() {
        return fake.baseUrl();
    }

    void enqueue(Behaviour behaviour) {
        fake.enqueue((call, exchange) -> behaviour.answer(call.body(), exchange));
    }

    /** Drops the behaviours not used yet: plain answers from here on. */
    void clearQueue() {
        fake.clearQueue();
    }

    /** Forgets what the stub has received so far. */
    void clearReceived() {
        fake.calls().clear();
    }

    /** What the stub has received, oldest first. */
    List<Received> received() {
        return fake.calls().stream().map(Received::of).toList();
    }

    /** An answer with usage {@link #TOTAL} (cache tokens included), plain or streamed, with {@code headers}. */
    static Behaviour ok(Map<String, String> headers) {
        return (body, response) -> {
            headers.forEach(response::header);
            if (body.path("stream").asBoolean(false)) {
                Exchange out = startStream(response);
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
                Exchange out = startStream(response);
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

    private static Exchange startStream(Exchange response) throws IOException {
        Exchange out = response.status(200).startStream("text/event-stream");
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

    private static void delta(Exchange out) throws IOException {
        ObjectNode delta = OpenAi.JSON
                .createObjectNode()
                .put("type", "content_block_delta")
                .put("index", 0);
        delta.putObject("delta").put("type", "text_delta").put("text", WORD);
        event(out, "content_block_delta", delta);
    }

    private static void finish(Exchange out) throws IOException {
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

    private static void event(Exchange out, String name, ObjectNode data) throws IOException {
        out.event(name, data.toString());
    }

    private static void write(Exchange response, int status, Map<String, String> headers, String body)
            throws IOException {
        headers.forEach(response::header);
        response.json(status, body);
    }

    @Override
    public void close() {
        fake.close();
    }
}
