package dev.ratelimit.fakemodel;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * A model's answer, written in the shape of the endpoint called: a chat completion, a legacy
 * completion, a Responses API response, embeddings, an Anthropic message, a Gemini {@code
 * GenerateContentResponse}, or a token count; plain, or streamed (server-sent events; Gemini's JSON
 * array without {@code alt=sse}) one part per chunk when the call asks for a stream. It reports the
 * {@link Usage} set here in the provider's fields (none after {@link #noUsage}), and a stream can be
 * scripted: a pause between parts, and after some parts a wait for the test's latch, then one of
 * the {@link Then} endings. Immutable: each method returns a new reply.
 */
public final class Reply implements Behaviour {

    /** How a reply ends, in each provider's words. */
    public enum Finish {
        /** Complete: {@code stop}, {@code end_turn}, {@code STOP}, Responses' {@code completed}. */
        STOP,
        /**
         * Cut at the output limit: {@code length}, {@code max_tokens}, {@code MAX_TOKENS}, Responses'
         * {@code incomplete}.
         */
        LENGTH,
        /** Responses' {@code failed} (elsewhere as {@link #STOP}). */
        FAILED
    }

    /** What a stream does at its scripted point ({@link #at}), once the test's latch (if any) is released. */
    public enum Then {
        /** Goes on with the remaining parts and ends normally. */
        CONTINUE,
        /** Breaks the connection off, the stream unfinished. */
        BREAK,
        /** Goes silent for the {@linkplain #stall(Duration) stall}, then ends the answer unfinished. */
        STALL,
        /** Sends the reply's parts over and over, {@linkplain #pause paused} as set, until a write fails. */
        ENDLESS,
        /**
         * Sends the provider's error event (Anthropic's {@code overloaded_error}; an {@code error}
         * object elsewhere) and ends the answer.
         */
        ERROR
    }

    private record At(int parts, @Nullable CountDownLatch release, Then then) {}

    private static final Runnable NOTHING = () -> {};

    // each set once: by the factory, or on the copy a method returns before anyone else sees it
    final List<String> parts;

    @Nullable
    Usage usage;

    Finish finish = Finish.STOP;
    boolean callTools;
    private Duration pause = Duration.ZERO;
    private @Nullable At at;
    private Duration stall = Duration.ofSeconds(3);

    @Nullable
    ToLongFunction<String> outputCount;

    private Map<String, String> headers = Map.of();
    private Runnable onPart = NOTHING;
    private Runnable onEnd = NOTHING;

    private Reply(List<String> parts) {
        this.parts = List.copyOf(parts);
    }

    /** A copy of this reply, for a method to change one setting of. */
    private Reply copy() {
        Reply copy = new Reply(parts);
        copy.usage = usage;
        copy.finish = finish;
        copy.callTools = callTools;
        copy.pause = pause;
        copy.at = at;
        copy.stall = stall;
        copy.outputCount = outputCount;
        copy.headers = headers;
        copy.onPart = onPart;
        copy.onEnd = onEnd;
        return copy;
    }

    /**
     * Returns a reply of this text, streamed a word a chunk (each word after the first with the
     * space before it), reporting no usage until {@link #usage} sets one.
     *
     * @param text the reply's text
     * @return the reply
     */
    public static Reply text(String text) {
        List<String> parts = new ArrayList<>();
        String[] words = text.split(" ", -1);
        for (int i = 0; i < words.length; i++) {
            String part = i == 0 ? words[i] : " " + words[i];
            if (!part.isEmpty()) {
                parts.add(part);
            }
        }
        return parts(parts);
    }

    /**
     * Returns a reply of these parts, streamed one a chunk, its text their concatenation.
     *
     * @param parts the parts
     * @return the reply
     */
    public static Reply parts(List<String> parts) {
        return new Reply(parts);
    }

    /**
     * Returns the reply's text: its parts joined.
     *
     * @return the text
     */
    public String fullText() {
        return String.join("", parts);
    }

    /**
     * Returns this reply reporting this usage (a count of tokens answers with its {@code input}).
     *
     * @param usage the usage
     * @return the new reply
     */
    public Reply usage(Usage usage) {
        Objects.requireNonNull(usage, "usage must not be null");
        Reply copy = copy();
        copy.usage = usage;
        return copy;
    }

    /**
     * Returns this reply reporting {@code input} prompt and {@code output} reply tokens.
     *
     * @param input the prompt's tokens
     * @param output the reply's tokens
     * @return the new reply
     */
    public Reply usage(long input, long output) {
        return usage(Usage.of(input, output));
    }

    /**
     * Returns this reply reporting no usage: no {@code usage} field, no usage chunk.
     *
     * @return the new reply
     */
    public Reply noUsage() {
        Reply copy = copy();
        copy.usage = null;
        return copy;
    }

    /**
     * Returns this reply ending this way.
     *
     * @param finish the ending
     * @return the new reply
     */
    public Reply finish(Finish finish) {
        Objects.requireNonNull(finish, "finish must not be null");
        Reply copy = copy();
        copy.finish = finish;
        return copy;
    }

    /**
     * Returns this reply calling a tool instead, on a chat completion that offers tools and whose
     * history holds no tool result yet: a call of the first tool offered, with arguments {@code {}}.
     *
     * @return the new reply
     */
    public Reply callingTools() {
        Reply copy = copy();
        copy.callTools = true;
        return copy;
    }

    /**
     * Returns this reply streamed with a pause before each part after the first.
     *
     * @param pause the pause
     * @return the new reply
     */
    public Reply pause(Duration pause) {
        if (pause.isNegative()) {
            throw new IllegalArgumentException("pause must not be negative: " + pause);
        }
        Reply copy = copy();
        copy.pause = pause;
        return copy;
    }

    /**
     * Returns this reply's stream doing {@code then} once {@code parts} parts are out (at most all of
     * them).
     *
     * @param parts how many parts go out first
     * @param then what the stream does next
     * @return the new reply
     */
    public Reply at(int parts, Then then) {
        return at(parts, null, then);
    }

    /**
     * Returns this reply's stream waiting, once {@code parts} parts are out (at most all of them),
     * for {@code release} (30 seconds at most), then doing {@code then}.
     *
     * @param parts how many parts go out first
     * @param release what the stream waits for, or {@code null} not to wait
     * @param then what the stream does next
     * @return the new reply
     */
    public Reply at(int parts, @Nullable CountDownLatch release, Then then) {
        if (parts < 0) {
            throw new IllegalArgumentException("parts must not be negative: " + parts);
        }
        Objects.requireNonNull(then, "then must not be null");
        Reply copy = copy();
        copy.at = new At(parts, release, then);
        return copy;
    }

    /**
     * Returns this reply going silent this long when it {@linkplain Then#STALL stalls} (3 seconds by
     * default).
     *
     * @param stall how long the stream says nothing
     * @return the new reply
     */
    public Reply stall(Duration stall) {
        Reply copy = copy();
        copy.stall = stall;
        return copy;
    }

    /**
     * Returns this reply counting its text so far for the usage of a Gemini stream's earlier chunks
     * (without it they report the prompt alone, as Gemini does).
     *
     * @param outputCount the tokens of a text
     * @return the new reply
     */
    public Reply countingOutput(ToLongFunction<String> outputCount) {
        Reply copy = copy();
        copy.outputCount = outputCount;
        return copy;
    }

    /**
     * Returns this reply with one more response header.
     *
     * @param name the header's name
     * @param value its value
     * @return the new reply
     */
    public Reply header(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        Reply copy = copy();
        copy.headers = Map.copyOf(more);
        return copy;
    }

    /**
     * Returns this reply running {@code onPart} after each streamed part is out.
     *
     * @param onPart what to run, such as a counter's increment
     * @return the new reply
     */
    public Reply onPart(Runnable onPart) {
        Reply copy = copy();
        copy.onPart = onPart;
        return copy;
    }

    /**
     * Returns this reply running {@code onEnd} when its side of the answer is over, however it ended.
     *
     * @param onEnd what to run, such as a latch's count down
     * @return the new reply
     */
    public Reply onEnd(Runnable onEnd) {
        Reply copy = copy();
        copy.onEnd = onEnd;
        return copy;
    }

    @Override
    public void answer(Call call, Exchange exchange) throws Exception {
        try {
            headers.forEach(exchange::header);
            switch (call.api()) {
                case CHAT_COMPLETIONS -> OpenAiAnswers.chat(this, call, exchange);
                case COMPLETIONS -> OpenAiAnswers.completions(this, call, exchange);
                case RESPONSES -> OpenAiAnswers.responses(this, call, exchange);
                case EMBEDDINGS -> OpenAiAnswers.embeddings(this, call, exchange);
                case MESSAGES -> AnthropicAnswers.messages(this, call, exchange);
                case COUNT_TOKENS -> exchange.json(200, Json.object().put("input_tokens", input()));
                case GENERATE_CONTENT, STREAM_GENERATE_CONTENT -> GeminiAnswers.generate(this, call, exchange);
                case GEMINI_COUNT_TOKENS -> exchange.json(200, Json.object().put("totalTokens", input()));
                case OTHER -> notFound(call).answer(call, exchange);
            }
        } finally {
            onEnd.run();
        }
    }

    /** The provider's 404 for a call the fake has no answer for. */
    static Failure notFound(Call call) {
        return Failure.status(404)
                .message("The fake model has no " + call.method() + " " + call.path() + ".")
                .code("unknown_url");
    }

    private long input() {
        return usage == null ? 0 : usage.input();
    }

    /** A stream's frames in one provider's shape. */
    interface Frames {
        void begin() throws IOException;

        void part(int index, String text) throws IOException;

        void end() throws IOException;

        void error() throws IOException;
    }

    /** Streams the parts through {@code frames}: pauses, the scripted point, the ending. */
    void stream(Exchange exchange, Frames frames) throws Exception {
        frames.begin();
        int count = parts.size();
        int stop = at == null ? -1 : Math.min(at.parts(), count);
        for (int i = 0; ; i++) {
            if (i == stop && !interrupt(exchange, frames, i)) {
                return;
            }
            if (i == count) {
                break;
            }
            if (i > 0 && !pause.isZero()) {
                Thread.sleep(pause.toMillis());
            }
            frames.part(i, parts.get(i));
            onPart.run();
        }
        frames.end();
    }

    /** Does the scripted thing at part {@code index}; returns whether the stream goes on. */
    private boolean interrupt(Exchange exchange, Frames frames, int index) throws Exception {
        At point = Objects.requireNonNull(at);
        if (point.release() != null && !point.release().await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never released the stream");
        }
        switch (point.then()) {
            case CONTINUE -> {
                return true;
            }
            case BREAK -> exchange.breakOff();
            case STALL -> Thread.sleep(stall.toMillis());
            case ENDLESS -> {
                for (int k = 0; ; k++) { // until a write fails: the client has gone
                    if (!pause.isZero()) {
                        Thread.sleep(pause.toMillis());
                    }
                    frames.part(index + k, parts.isEmpty() ? " " : parts.get(k % parts.size()));
                    onPart.run();
                }
            }
            case ERROR -> frames.error();
        }
        return false;
    }
}
