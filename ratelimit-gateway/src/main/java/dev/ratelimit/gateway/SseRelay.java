package dev.ratelimit.gateway;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.genai.TokenUsage;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Relays an upstream's server-sent events to the client one event at a time, flushing each as it
 * arrives, while an {@link Events} watcher of the endpoint's protocol reads each one: the usage, the
 * text produced so far (to charge a stream that ends early) and whether the stream reached its end.
 * Every protocol's stream is read here (OpenAI's in this class's watchers, Anthropic's in {@link
 * AnthropicEvents}). Not thread-safe: one per response.
 */
final class SseRelay {

    /** How the relay ended. */
    enum Ending {
        /** The upstream finished the stream as its protocol says. */
        COMPLETED,
        /** Writing to the client failed: it went away. */
        CLIENT_GONE,
        /** Reading from the upstream failed or ended before the stream was finished. */
        BROKEN
    }

    /** What one protocol's stream means: a watcher per response, fed each event in turn. */
    interface Events {

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
         * that the prompt and the text produced so far, counted.
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

    /** Thrown for a failed write to the client, to tell it from a failed read upstream. */
    private static final class ClientGone extends IOException {
        private static final long serialVersionUID = 1L;

        ClientGone(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private final Events events;

    SseRelay(Events events) {
        this.events = events;
    }

    Ending relay(InputStream upstream, OutputStream client) {
        BufferedReader reader = new BufferedReader(new InputStreamReader(upstream, StandardCharsets.UTF_8));
        List<String> event = new ArrayList<>();
        try {
            String line;
            while ((line = reader.readLine()) != null) {
                if (!line.isEmpty()) {
                    event.add(line);
                } else if (!event.isEmpty()) {
                    forward(event, client);
                    event.clear();
                }
            }
            if (!event.isEmpty()) {
                forward(event, client); // the upstream closed without the last blank line
            }
        } catch (ClientGone e) {
            return Ending.CLIENT_GONE;
        } catch (IOException e) {
            // the read failed: after the protocol's end nothing was lost, before it the stream broke off
        }
        return events.finished() ? Ending.COMPLETED : Ending.BROKEN;
    }

    private void forward(List<String> event, OutputStream client) throws ClientGone {
        StringBuilder data = new StringBuilder();
        String type = null;
        for (String line : event) {
            if (line.startsWith("data:")) {
                if (data.length() > 0) {
                    data.append('\n');
                }
                data.append(line, line.startsWith("data: ") ? 6 : 5, line.length());
            } else if (line.startsWith("event:")) {
                type = line.substring(6).strip();
            }
        }
        if ((data.length() > 0 || type != null) && !events.inspect(type, data.toString())) {
            return;
        }
        write(client, String.join("\n", event) + "\n\n");
    }

    /** Sends the protocol's error event after a stream that broke off. */
    void writeBrokenNotice(OutputStream client) {
        try {
            write(
                    client,
                    events.brokenNotice(
                            "The upstream's stream broke off before it finished; the answer is incomplete."));
        } catch (ClientGone e) {
            // the client left as well
        }
    }

    private static void write(OutputStream client, String text) throws ClientGone {
        try {
            client.write(text.getBytes(StandardCharsets.UTF_8));
            client.flush();
        } catch (IOException e) {
            throw new ClientGone(e);
        }
    }

    /** The event's JSON, or {@code null} when it is not JSON (relayed as it came, not ours to judge). */
    static @Nullable JsonNode json(String data) {
        try {
            return OpenAi.JSON.readTree(data);
        } catch (JacksonException e) {
            return null; // not ours to judge: relayed as it came
        }
    }

    /**
     * What both of OpenAI's stream kinds keep: the text produced so far and the usage reported for
     * the whole stream, which alone is the figure once it came.
     */
    private abstract static class Tally implements Events {

        final StringBuilder produced = new StringBuilder();
        private final ToLongFunction<String> count;

        @Nullable
        TokenUsage usage;

        Tally(ToLongFunction<String> count) {
            this.count = count;
        }

        @Override
        public TokenUsage used(long promptTokens) {
            TokenUsage reported = usage;
            return reported != null ? reported : TokenUsage.of(promptTokens, count.applyAsLong(produced.toString()));
        }

        @Override
        public boolean nothing() {
            return usage == null && produced.length() == 0;
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
    static final class ChoiceEvents extends Tally {

        private final boolean clientWantsUsage;
        private boolean done;

        ChoiceEvents(boolean clientWantsUsage, ToLongFunction<String> count) {
            super(count);
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
    static final class ResponseEvents extends Tally {

        private @Nullable String ending;
        private long sequence;

        ResponseEvents(ToLongFunction<String> count) {
            super(count);
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
