package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.fakemodel.Call;
import dev.ratelimit.fakemodel.Exchange;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.fakemodel.OpenAiBatches;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * OpenAI's API as the gateway's tests script it, on the project's one fake model ({@link FakeModel}):
 * each request takes the next queued behaviour (a completion with known usage, a refusal, a stream
 * that waits, breaks off or never ends), or a plain completion when none is queued; files and
 * batches are the fake's. It records what it received.
 */
final class StubUpstream implements AutoCloseable {

    static final int PROMPT = 11;
    static final int COMPLETION = 7;
    static final String WORD = " tok";

    /** What the stub saw of one request. */
    record Received(
            String method,
            String path,
            @Nullable String authorization,
            JsonNode body,
            @Nullable String cookie) {

        static Received of(Call call) {
            return new Received(
                    call.method(), call.path(), call.header("Authorization"), call.body(), call.header("Cookie"));
        }
    }

    /** How the stub answers one request: an OpenAI-shaped answer written to the fake's exchange. */
    @FunctionalInterface
    interface Behaviour {
        void answer(JsonNode body, Exchange response) throws Exception;

        /** As the fake model takes it. */
        default dev.ratelimit.fakemodel.Behaviour onFake() {
            return (call, exchange) -> answer(call.body(), exchange);
        }
    }

    private final FakeModel fake;

    /** The connections open to the stub now. */
    int connections() {
        return fake.connections();
    }

    private StubUpstream(FakeModel fake) {
        this.fake = fake;
    }

    static StubUpstream start() {
        // a thread per request: enough for ConcurrentStreamsTest's streams held at once; HTTP/1.1, and h2c
        // with prior knowledge on the same port (for upstreams with http-version: 2)
        return new StubUpstream(FakeModel.builder()
                .name("stub")
                .threads(1_100)
                .h2c()
                .answer(ok().onFake())
                .start());
    }

    String baseUrl() {
        return fake.baseUrl();
    }

    void enqueue(Behaviour behaviour) {
        fake.enqueue(behaviour.onFake());
    }

    /** How the stub answers when nothing is queued: {@link #ok()} unless set here. */
    void answerByDefault(Behaviour behaviour) {
        fake.answerByDefault(behaviour.onFake());
    }

    /** OpenAI's files and batches, which the test moves through their states. */
    OpenAiBatches batches() {
        return fake.openAiBatches();
    }

    List<Received> received() {
        return fake.calls().stream().map(Received::of).toList();
    }

    /** A completion with usage {@link #PROMPT} + {@link #COMPLETION}: plain, or streamed if asked. */
    static Behaviour ok() {
        return (body, response) -> {
            if (body.path("stream").asBoolean(false)) {
                Exchange out = startStream(response);
                for (int i = 0; i < COMPLETION; i++) {
                    event(out, chunk(WORD, null).toString());
                }
                finish(body, out);
                return;
            }
            ObjectNode answer =
                    OpenAi.JSON.createObjectNode().put("id", "chatcmpl-stub").put("object", "chat.completion");
            answer.put("created", 0).put("model", body.path("model").asText());
            ObjectNode choice =
                    answer.putArray("choices").addObject().put("index", 0).put("finish_reason", "stop");
            choice.putObject("message")
                    .put("role", "assistant")
                    .put("content", WORD.repeat(COMPLETION).strip());
            answer.putObject("usage")
                    .put("prompt_tokens", PROMPT)
                    .put("completion_tokens", COMPLETION)
                    .put("total_tokens", PROMPT + COMPLETION);
            write(response, 200, Map.of(), answer.toString());
        };
    }

    /**
     * A plain chat completion reporting this usage: {@code prompt} input tokens of which {@code cached}
     * were read from the prompt cache, and {@code completion} output tokens.
     */
    static Behaviour usage(long prompt, long cached, long completion) {
        return (body, response) -> {
            ObjectNode answer =
                    OpenAi.JSON.createObjectNode().put("id", "chatcmpl-stub").put("object", "chat.completion");
            answer.put("created", 0).put("model", body.path("model").asText());
            answer.putArray("choices")
                    .addObject()
                    .put("index", 0)
                    .put("finish_reason", "stop")
                    .putObject("message")
                    .put("role", "assistant")
                    .put("content", "ok");
            ObjectNode usage = answer.putObject("usage")
                    .put("prompt_tokens", prompt)
                    .put("completion_tokens", completion)
                    .put("total_tokens", prompt + completion);
            usage.putObject("prompt_tokens_details").put("cached_tokens", cached);
            write(response, 200, Map.of(), answer.toString());
        };
    }

    /** Answers with a status, headers and an OpenAI-shaped error body. */
    static Behaviour status(int status, Map<String, String> headers) {
        return (body, response) -> write(
                response,
                status,
                headers,
                OpenAi.errorBody("upstream", "stub_" + status, null, "stub says " + status)
                        .toString());
    }

    /** What a waiting stream does once released. */
    enum Then {
        /** Finishes normally, with the usage chunk if asked. */
        FINISH,
        /** Breaks the connection without finishing the response. */
        DROP,
        /** Goes silent for twice the test configuration's idle timeout, so the gateway's ends it. */
        STALL,
        /** Sends chunks until a write fails, that is until the gateway aborts it. */
        ENDLESS
    }

    /**
     * Streams {@code chunks} words, then waits for {@code release} (so a test can act while the
     * stream is open), then does {@code then}. {@code ended} counts down when the stub's side is over.
     */
    static Behaviour stream(int chunks, CountDownLatch release, Then then, CountDownLatch ended) {
        return (body, response) -> {
            try {
                Exchange out = startStream(response);
                for (int i = 0; i < chunks; i++) {
                    event(out, chunk(WORD, null).toString());
                }
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the stream");
                }
                switch (then) {
                    case FINISH -> finish(body, out);
                    case DROP -> throw new IllegalStateException("stub drops the connection mid-stream");
                    case STALL -> Thread.sleep(3_000);
                    case ENDLESS -> {
                        for (int i = 0; i < 30_000; i++) {
                            event(out, chunk(WORD, null).toString());
                            Thread.sleep(1);
                        }
                    }
                }
            } finally {
                ended.countDown();
            }
        };
    }

    /**
     * Streams {@code chunks} words {@code pauseMillis} apart, then finishes normally (with the usage
     * chunk, {@link #PROMPT} + {@link #COMPLETION}, if asked): a stream that stays open for a while.
     */
    static Behaviour slowStream(int chunks, long pauseMillis) {
        return (body, response) -> {
            Exchange out = startStream(response);
            for (int i = 0; i < chunks; i++) {
                event(out, chunk(WORD, null).toString());
                Thread.sleep(pauseMillis);
            }
            finish(body, out);
        };
    }

    /**
     * Streams {@code events} chunks of {@code chars} characters each (a word of {@link #WORD}
     * repeated) as fast as the gateway takes them, then finishes normally; {@link Integer#MAX_VALUE}
     * streams until a write fails, that is until the gateway aborts it. {@code written} counts the
     * chunks sent; {@code ended} counts down when the stub's side is over.
     */
    static Behaviour flood(
            int events, int chars, java.util.concurrent.atomic.AtomicLong written, CountDownLatch ended) {
        return (body, response) -> {
            try {
                Exchange out = startStream(response);
                String content = WORD.repeat(Math.max(1, chars / WORD.length()));
                String event = "data: " + chunk(content, null) + "\n\n";
                for (int i = 0; i < events; i++) {
                    out.send(event);
                    written.incrementAndGet();
                }
                finish(body, out);
            } finally {
                ended.countDown();
            }
        };
    }

    /** The usage a Responses API answer of the stub reports by default: input and output tokens. */
    static final int INPUT = 13;

    static final int OUTPUT = 5;

    /**
     * A Responses API answer reporting {@code input} + {@code output} tokens: plain ({@code
     * "status"} from {@code terminal}), or, if the request streams, typed events ({@code
     * response.created}, {@link #OUTPUT} {@code response.output_text.delta}s) ending with the
     * {@code terminal} event ({@code response.completed}, {@code response.incomplete} or {@code
     * response.failed}) whose {@code response.usage} carries the figure.
     */
    static Behaviour response(String terminal, long input, long output) {
        return (body, response) -> {
            ObjectNode done = responseObject(terminal.substring("response.".length()), input, output);
            if (!body.path("stream").asBoolean(false)) {
                write(response, 200, Map.of(), done.toString());
                return;
            }
            Exchange out = startStream(response);
            typed(out, "response.created", 0, responseObject("in_progress", -1, -1));
            for (int i = 0; i < OUTPUT; i++) {
                typed(out, "response.output_text.delta", i + 1, null);
            }
            typed(out, terminal, OUTPUT + 1, done);
        };
    }

    /**
     * Streams {@code response.created} and {@code deltas} text deltas, then waits for {@code
     * release}, then does {@code then} ({@link Then#FINISH} ends with {@code response.completed}).
     */
    static Behaviour responseStream(int deltas, CountDownLatch release, Then then, CountDownLatch ended) {
        return (body, response) -> {
            try {
                Exchange out = startStream(response);
                typed(out, "response.created", 0, responseObject("in_progress", -1, -1));
                for (int i = 0; i < deltas; i++) {
                    typed(out, "response.output_text.delta", i + 1, null);
                }
                if (!release.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never released the stream");
                }
                switch (then) {
                    case FINISH ->
                        typed(out, "response.completed", deltas + 1, responseObject("completed", INPUT, OUTPUT));
                    case DROP -> throw new IllegalStateException("stub drops the connection mid-stream");
                    case STALL -> Thread.sleep(3_000);
                    case ENDLESS -> {
                        for (int i = 0; i < 30_000; i++) {
                            typed(out, "response.output_text.delta", deltas + 1 + i, null);
                            Thread.sleep(1);
                        }
                    }
                }
            } finally {
                ended.countDown();
            }
        };
    }

    private static ObjectNode responseObject(String status, long input, long output) {
        ObjectNode answer = OpenAi.JSON
                .createObjectNode()
                .put("id", "resp_stub")
                .put("object", "response")
                .put("status", status)
                .put("model", "stub");
        ObjectNode message =
                answer.putArray("output").addObject().put("type", "message").put("role", "assistant");
        message.putArray("content").addObject().put("type", "output_text").put("text", WORD.repeat(OUTPUT));
        if (input < 0) {
            answer.putNull("usage");
        } else {
            answer.putObject("usage")
                    .put("input_tokens", input)
                    .put("output_tokens", output)
                    .put("total_tokens", input + output);
        }
        return answer;
    }

    /** One typed event; a {@code null} response makes it a text delta of {@link #WORD}. */
    private static void typed(Exchange out, String type, int sequence, @Nullable ObjectNode response)
            throws IOException {
        ObjectNode event = OpenAi.JSON.createObjectNode().put("type", type).put("sequence_number", sequence);
        if (response == null) {
            event.put("item_id", "msg_stub")
                    .put("output_index", 0)
                    .put("content_index", 0)
                    .put("delta", WORD);
        } else {
            event.set("response", response);
        }
        out.event(type, event.toString());
    }

    /** Sends no response headers until {@code release}: the gateway's first-byte timeout ends it. */
    static Behaviour hang(CountDownLatch release) {
        return (body, response) -> release.await(30, TimeUnit.SECONDS);
    }

    private static Exchange startStream(Exchange response) throws IOException {
        return response.status(200).startStream("text/event-stream");
    }

    private static void finish(JsonNode body, Exchange out) throws IOException {
        ObjectNode last = chunk(null, "stop");
        event(out, last.toString());
        if (body.path("stream_options").path("include_usage").asBoolean(false)) {
            ObjectNode usage =
                    OpenAi.JSON.createObjectNode().put("id", "chatcmpl-stub").put("object", "chat.completion.chunk");
            usage.putArray("choices");
            usage.putObject("usage")
                    .put("prompt_tokens", PROMPT)
                    .put("completion_tokens", COMPLETION)
                    .put("total_tokens", PROMPT + COMPLETION);
            event(out, usage.toString());
        }
        event(out, "[DONE]");
    }

    private static ObjectNode chunk(@Nullable String content, @Nullable String finish) {
        ObjectNode chunk = OpenAi.JSON
                .createObjectNode()
                .put("id", "chatcmpl-stub")
                .put("object", "chat.completion.chunk")
                .put("created", 0)
                .put("model", "stub");
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        ObjectNode delta = choice.putObject("delta");
        if (content != null) {
            delta.put("content", content);
        }
        choice.put("finish_reason", finish);
        return chunk;
    }

    private static void event(Exchange out, String data) throws IOException {
        out.event(data);
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
