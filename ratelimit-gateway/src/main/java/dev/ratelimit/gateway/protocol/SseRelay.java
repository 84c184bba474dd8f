package dev.ratelimit.gateway.protocol;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicEvents;
import dev.ratelimit.gateway.protocol.gemini.GeminiEvents;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.upstream.Relay;
import dev.ratelimit.genai.StreamedTokens;
import dev.ratelimit.genai.TokenUsage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Reads an upstream's server-sent events as their bytes arrive, for a {@link Relay} that passes them
 * on to the client one event at a time, while an {@link Events} watcher of the endpoint's protocol
 * reads each one: the usage, the text produced so far (counted as it passes, to charge a stream that
 * ends early) and whether the stream reached its end. Every protocol's events are read by a watcher
 * (OpenAI's in this class's, Anthropic's in {@link AnthropicEvents}, Gemini's in {@link
 * GeminiEvents}). An event larger than {@value
 * #MAX_EVENT_BYTES} bytes ends the stream as broken off. Not thread-safe: one per response, used on
 * its relay's steps.
 */
public final class SseRelay implements StreamFraming {

    /** The largest event relayed: a Responses API stream's last event carries the whole response. */
    static final int MAX_EVENT_BYTES = 4 * 1024 * 1024;

    /** How the relay ended. */
    public enum Ending {
        /** The upstream finished the stream as its protocol says. */
        COMPLETED,
        /** Writing to the client failed: it went away. */
        CLIENT_GONE,
        /** Reading from the upstream failed or ended before the stream was finished. */
        BROKEN
    }

    /** What one protocol's stream means: a watcher per response, fed each event in turn. */
    public interface Events {

        /**
         * Reads one event.
         *
         * @param type the {@code event:} field, or {@code null} when it has none
         * @param data the {@code data:} lines joined
         * @return whether the event goes on to the client
         */
        boolean inspect(@Nullable String type, String data);

        /** Whether the stream reached its end as the protocol defines it (an error event may end it too). */
        boolean finished();

        /**
         * Whether the stream was ended by an error event that settles like a stream broken off: it is
         * cancelled when {@link #nothing()} was produced.
         */
        boolean failed();

        /**
         * The tokens to charge for the stream so far, by kind: what the upstream reported, or failing
         * that the prompt and the text produced so far, counted as it passed.
         *
         * @param promptTokens the gateway's count of the prompt
         */
        TokenUsage used(long promptTokens);

        /** Whether the stream produced no answer yet (no text and no usage of the whole stream): nothing to charge if it fails. */
        boolean nothing();

        /** How a finished stream ended, for the settlement metrics. */
        String ending();

        /** The event sent after a stream that broke off, so the client does not take it as finished. */
        String brokenNotice(String message);
    }

    private final Events events;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private final List<String> event = new ArrayList<>();
    private long eventBytes;
    private boolean afterCarriageReturn;

    public SseRelay(Events events) {
        this.events = events;
    }

    @Override
    public Events events() {
        return events;
    }

    /**
     * Splits the bytes into lines ({@code \n}, {@code \r\n} or {@code \r} end one) and the lines
     * into events (a blank line ends one), relaying each event as it completes.
     */
    @Override
    public void onBytes(ByteBuffer bytes, ByteArrayOutputStream out) throws IOException {
        while (bytes.hasRemaining()) {
            byte b = bytes.get();
            if (afterCarriageReturn) {
                afterCarriageReturn = false;
                if (b == '\n') {
                    continue; // the \n of \r\n
                }
            }
            if (b == '\n' || b == '\r') {
                afterCarriageReturn = b == '\r';
                endLine(out);
            } else {
                line.write(b);
                if (eventBytes + line.size() > MAX_EVENT_BYTES) {
                    throw new IOException("the upstream sent an event larger than " + MAX_EVENT_BYTES + " bytes");
                }
            }
        }
    }

    /** The upstream closed: a last line or event without its blank line is relayed as it is. */
    @Override
    public void onEnd(ByteArrayOutputStream out) {
        if (line.size() > 0) {
            endLine(out);
        }
        if (!event.isEmpty()) {
            forward(out);
        }
    }

    private void endLine(ByteArrayOutputStream out) {
        // a line break is never inside a UTF-8 sequence: each line decodes alone
        String text = line.toString(StandardCharsets.UTF_8);
        line.reset();
        if (!text.isEmpty()) {
            event.add(text);
            eventBytes += text.length() + 1;
        } else if (!event.isEmpty()) {
            forward(out);
        }
    }

    private void forward(ByteArrayOutputStream out) {
        StringBuilder data = new StringBuilder();
        String type = null;
        for (String field : event) {
            if (field.startsWith("data:")) {
                if (data.length() > 0) {
                    data.append('\n');
                }
                data.append(field, field.startsWith("data: ") ? 6 : 5, field.length());
            } else if (field.startsWith("event:")) {
                type = field.substring(6).strip();
            }
        }
        boolean relayed = (data.length() == 0 && type == null) || events.inspect(type, data.toString());
        if (relayed) {
            byte[] bytes = (String.join("\n", event) + "\n\n").getBytes(StandardCharsets.UTF_8);
            out.write(bytes, 0, bytes.length);
        }
        event.clear();
        eventBytes = 0;
    }

    @Override
    public Ending ending(Relay.End end) {
        if (end == Relay.End.CLIENT_GONE) {
            return Ending.CLIENT_GONE;
        }
        // a read that failed after the protocol's end lost nothing; before it the stream broke off
        return events.finished() ? Ending.COMPLETED : Ending.BROKEN;
    }

    /** The protocol's error event sent after a stream that broke off. */
    @Override
    public byte[] brokenNotice() {
        return events.brokenNotice("The upstream's stream broke off before it finished; the answer is incomplete.")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The event's JSON, or {@code null} when it is not JSON (relayed as it came, not ours to judge). */
    public static @Nullable JsonNode json(String data) {
        try {
            return OpenAi.JSON.readTree(data);
        } catch (JacksonException e) {
            return null; // not ours to judge: relayed as it came
        }
    }

    /**
     * What both of OpenAI's stream kinds keep: the count of the text produced so far and the usage
     * reported for the whole stream, which alone is the figure once it came.
     */
    private abstract static class Tally implements Events {

        final StreamedTokens produced;

        @Nullable
        TokenUsage usage;

        Tally(StreamedTokens produced) {
            this.produced = produced;
        }

        @Override
        public TokenUsage used(long promptTokens) {
            TokenUsage reported = usage;
            return reported != null ? reported : TokenUsage.of(promptTokens, produced.count());
        }

        @Override
        public boolean nothing() {
            return usage == null && produced.isEmpty();
        }

        @Override
        public boolean failed() {
            return false; // an error event ends the stream, settled to what it reported or produced
        }
    }

    /**
     * Chat completions and legacy completions: {@code data:} chunks with {@code choices} (a {@code
     * delta} in chat, {@code text} in completions), the usage chunk (asked of the upstream by the
     * gateway; dropped here if the client did not ask for it) and {@code data: [DONE]}.
     */
    public static final class ChoiceEvents extends Tally {

        private final boolean clientWantsUsage;
        private boolean done;

        public ChoiceEvents(boolean clientWantsUsage, StreamedTokens produced) {
            super(produced);
            this.clientWantsUsage = clientWantsUsage;
        }

        @Override
        public boolean inspect(@Nullable String type, String data) {
            if (data.equals("[DONE]")) {
                done = true;
                return true;
            }
            JsonNode chunk = json(data);
            if (chunk == null) {
                return true;
            }
            JsonNode choices = chunk.path("choices");
            for (JsonNode choice : choices) {
                JsonNode delta = choice.path("delta");
                produced.append(choice.path("text").asText(""));
                produced.append(delta.path("content").asText(""));
                for (JsonNode call : delta.path("tool_calls")) {
                    produced.append(call.path("function").path("arguments").asText(""));
                }
            }
            TokenUsage reported = Endpoint.usageOf(chunk.get("usage"));
            if (reported != null) {
                usage = reported;
                return clientWantsUsage || !(choices.isArray() && choices.isEmpty());
            }
            return true;
        }

        @Override
        public boolean finished() {
            return done || usage != null;
        }

        @Override
        public String ending() {
            return "stream_completed";
        }

        @Override
        public String brokenNotice(String message) {
            return "data: " + OpenAi.errorBody("upstream_error", "stream_broken", null, message) + "\n\n";
        }
    }

    /**
     * The Responses API's typed events ({@code event: response.created}, {@code
     * response.output_text.delta}, ...): the stream ends with {@code response.completed}, {@code
     * response.incomplete} or {@code response.failed}, whose {@code response.usage} is the figure
     * (or an {@code error} event); there is no {@code [DONE]}. Every event is relayed.
     */
    public static final class ResponseEvents extends Tally {

        private @Nullable String ending;
        private long sequence;

        public ResponseEvents(StreamedTokens produced) {
            super(produced);
        }

        @Override
        public boolean inspect(@Nullable String type, String data) {
            JsonNode event = json(data);
            if (event == null) {
                return true;
            }
            String kind = type != null ? type : event.path("type").asText("");
            sequence = Math.max(sequence, event.path("sequence_number").asLong(0) + 1);
            if (kind.endsWith(".delta")
                    && !kind.contains("audio")
                    && event.path("delta").isTextual()) {
                produced.append(event.path("delta").textValue()); // text, refusals, tool arguments
            }
            switch (kind) {
                case "response.completed", "response.incomplete", "response.failed" -> {
                    ending = "stream_" + kind.substring("response.".length());
                    TokenUsage reported =
                            Endpoint.usageOf(event.path("response").get("usage"));
                    if (reported != null) {
                        usage = reported;
                    }
                }
                case "error" -> ending = "stream_failed";
                default -> {
                    // relayed as it came
                }
            }
            return true;
        }

        @Override
        public boolean finished() {
            return ending != null;
        }

        @Override
        public String ending() {
            return ending == null ? "stream_completed" : ending;
        }

        @Override
        public String brokenNotice(String message) {
            ObjectNode error = OpenAi.JSON
                    .createObjectNode()
                    .put("type", "error")
                    .put("code", "stream_broken")
                    .put("message", message)
                    .putNull("param")
                    .put("sequence_number", sequence);
            return "event: error\ndata: " + error + "\n\n";
        }
    }
}
