package dev.ratelimit.gateway;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Relays a chat completion's server-sent events from the upstream to the client one event at a
 * time, flushing each as it arrives, while it watches for the usage chunk (asked of the upstream
 * by the gateway; dropped here if the client did not ask for it) and keeps the text produced so far
 * (to charge a stream that ends early). Not thread-safe: one per response.
 */
final class SseRelay {

    /** How the relay ended. */
    enum Ending {
        /** The upstream finished the stream ({@code [DONE]} or end of body after the usage). */
        COMPLETED,
        /** Writing to the client failed: it went away. */
        CLIENT_GONE,
        /** Reading from the upstream failed or ended before the stream was finished. */
        BROKEN
    }

    /** Thrown for a failed write to the client, to tell it from a failed read upstream. */
    private static final class ClientGone extends IOException {
        private static final long serialVersionUID = 1L;

        ClientGone(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private final boolean clientWantsUsage;
    private final StringBuilder produced = new StringBuilder();
    private @Nullable JsonNode usage;
    private boolean done;

    SseRelay(boolean clientWantsUsage) {
        this.clientWantsUsage = clientWantsUsage;
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
            return done || usage != null ? Ending.COMPLETED : Ending.BROKEN;
        } catch (ClientGone e) {
            return Ending.CLIENT_GONE;
        } catch (IOException e) {
            return Ending.BROKEN;
        }
    }

    private void forward(List<String> event, OutputStream client) throws ClientGone {
        StringBuilder data = new StringBuilder();
        for (String line : event) {
            if (line.startsWith("data:")) {
                if (data.length() > 0) {
                    data.append('\n');
                }
                data.append(line, line.startsWith("data: ") ? 6 : 5, line.length());
            }
        }
        if (data.toString().equals("[DONE]")) {
            done = true;
        } else if (data.length() > 0 && !inspect(data.toString())) {
            return; // the usage chunk the client did not ask for
        }
        write(client, String.join("\n", event) + "\n\n");
    }

    /** Notes usage and produced text; returns whether the chunk goes to the client. */
    private boolean inspect(String data) {
        JsonNode chunk;
        try {
            chunk = OpenAi.JSON.readTree(data);
        } catch (JacksonException e) {
            return true; // not ours to judge: relayed as it came
        }
        JsonNode choices = chunk.path("choices");
        for (JsonNode choice : choices) {
            JsonNode delta = choice.path("delta");
            produced.append(delta.path("content").asText(""));
            for (JsonNode call : delta.path("tool_calls")) {
                produced.append(call.path("function").path("arguments").asText(""));
            }
        }
        JsonNode chunkUsage = chunk.get("usage");
        if (chunkUsage != null && chunkUsage.isObject()) {
            usage = chunkUsage;
            return clientWantsUsage || !(choices.isArray() && choices.isEmpty());
        }
        return true;
    }

    /** Sends an error event after a stream that broke off, so the client does not take it as finished. */
    void writeBrokenNotice(OutputStream client) {
        String event = "data: "
                + OpenAi.errorBody(
                        "upstream_error",
                        "stream_broken",
                        null,
                        "The upstream's stream broke off before it finished; the answer is incomplete.")
                + "\n\n";
        try {
            write(client, event);
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

    /** The usage the upstream reported, or {@code null}. */
    @Nullable
    JsonNode usage() {
        return usage;
    }

    /** The completion text and tool-call arguments relayed so far. */
    String produced() {
        return produced.toString();
    }
}
