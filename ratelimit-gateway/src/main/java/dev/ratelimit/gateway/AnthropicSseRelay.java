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

/**
 * Relays a Messages API stream event by event, flushing each as it arrives, while it reads the
 * usage: {@code message_start}'s {@code usage.input_tokens} (and cache tokens), {@code
 * message_delta}'s cumulative {@code usage.output_tokens}, and the text produced so far (to charge
 * a stream that ends early). Not thread-safe: one per response.
 */
final class AnthropicSseRelay {

    /** How the relay ended. */
    enum Ending {
        /** {@code message_stop} arrived. */
        COMPLETED,
        /** The upstream sent an {@code error} event and ended the stream. */
        ERROR,
        /** Writing to the client failed: it went away. */
        CLIENT_GONE,
        /** Reading from the upstream failed or ended before {@code message_stop}. */
        BROKEN
    }

    private static final class ClientGone extends IOException {
        private static final long serialVersionUID = 1L;

        ClientGone(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private final StringBuilder produced = new StringBuilder();
    private long input = -1;
    private long output;
    private boolean stopped;
    private boolean error;

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
                forward(event, client);
            }
        } catch (ClientGone e) {
            return Ending.CLIENT_GONE;
        } catch (IOException e) {
            return stopped ? Ending.COMPLETED : error ? Ending.ERROR : Ending.BROKEN;
        }
        return stopped ? Ending.COMPLETED : error ? Ending.ERROR : Ending.BROKEN;
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
        if (data.length() > 0) {
            inspect(data.toString());
        }
        write(client, String.join("\n", event) + "\n\n");
    }

    private void inspect(String data) {
        JsonNode event;
        try {
            event = OpenAi.JSON.readTree(data);
        } catch (JacksonException e) {
            return; // not ours to judge: relayed as it came
        }
        switch (event.path("type").asText("")) {
            case "message_start" -> {
                JsonNode usage = event.path("message").path("usage");
                input = Math.max(input, inputOf(usage));
                output = Math.max(output, usage.path("output_tokens").asLong(0));
            }
            case "content_block_start" -> {
                JsonNode block = event.path("content_block");
                produced.append(block.path("text").asText(""));
                if (block.path("type").asText().equals("tool_use")) {
                    produced.append(block.path("name").asText(""));
                }
            }
            case "content_block_delta" -> {
                JsonNode delta = event.path("delta");
                produced.append(delta.path("text").asText(""))
                        .append(delta.path("partial_json").asText(""))
                        .append(delta.path("thinking").asText(""));
            }
            case "message_delta" -> {
                JsonNode usage = event.path("usage");
                output = Math.max(output, usage.path("output_tokens").asLong(0));
                if (usage.has("input_tokens")) { // newer API versions repeat the input here, cumulative
                    input = Math.max(input, inputOf(usage));
                }
            }
            case "message_stop" -> stopped = true;
            case "error" -> error = true;
            default -> {
                // ping, content_block_stop and event types to come: relayed, nothing to read
            }
        }
    }

    /** {@code input_tokens} plus the cache writes and reads, all of which the prompt cost. */
    static long inputOf(JsonNode usage) {
        return Math.max(0, usage.path("input_tokens").asLong(0))
                + Math.max(0, usage.path("cache_creation_input_tokens").asLong(0))
                + Math.max(0, usage.path("cache_read_input_tokens").asLong(0));
    }

    /** Sends an {@code error} event after a stream that broke off, so the client does not take it as finished. */
    void writeBrokenNotice(OutputStream client) {
        String event = "event: error\ndata: "
                + Anthropic.errorBody(
                        "api_error", "The upstream's stream broke off before it finished; the answer is incomplete.")
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

    /** The input tokens {@code message_start} reported (cache included), or -1 before it arrived. */
    long input() {
        return input;
    }

    /** The output tokens the last {@code message_delta} (or {@code message_start}) reported. */
    long output() {
        return output;
    }

    /** The text, tool input and thinking relayed so far. */
    String produced() {
        return produced.toString();
    }
}
