package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.JsonArrayRelay;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.gateway.protocol.gemini.GeminiEvents;
import dev.ratelimit.gateway.protocol.gemini.GeminiTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.upstream.Relay;
import dev.ratelimit.genai.TokenCounts;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Gemini's streamed JSON array read element by element, whatever the bytes' cuts: strings holding
 * brackets, braces, escaped quotes and multi-byte characters, nested arrays; a stream cut off
 * mid-element ends valid, with an error element and the closing bracket.
 */
class JsonArrayRelayTest {

    private static final String FIRST = "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a ] } [ { \\\"quoted\\\""
            + " \\\\ back\"}],\"role\":\"model\"},\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":4,"
            + "\"candidatesTokenCount\":9}}";
    private static final String LAST = "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\" é 🚀 done\"}],"
            + "\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":4,"
            + "\"candidatesTokenCount\":12,\"totalTokenCount\":16}}";

    private static GeminiEvents events() {
        return new GeminiEvents(TokenCounts.gemini().stream());
    }

    /** Feeds the bytes in pieces of {@code size}, returning what the client gets. */
    private static String feed(JsonArrayRelay relay, byte[] bytes, int size) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int at = 0; at < bytes.length; at += size) {
            relay.onBytes(ByteBuffer.wrap(bytes, at, Math.min(size, bytes.length - at)), out);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    @DisplayName("every cut of the bytes: the same two elements read, relayed as valid JSON, the stream completed")
    void everyCut() throws Exception {
        byte[] stream = ("[" + FIRST + "\r\n,\r\n" + LAST + "\r\n]").getBytes(StandardCharsets.UTF_8);
        for (int size = 1; size <= stream.length; size += size < 8 ? 1 : 37) {
            GeminiEvents events = events();
            JsonArrayRelay relay = new JsonArrayRelay(events, GeminiEvents::errorChunk);
            JsonNode relayed = OpenAi.JSON.readTree(feed(relay, stream, size));
            assertThat(relayed.size()).as("pieces of %d bytes", size).isEqualTo(2);
            assertThat(relayed.get(0)
                            .path("candidates")
                            .path(0)
                            .path("content")
                            .path("parts")
                            .path(0)
                            .path("text")
                            .asText())
                    .isEqualTo("a ] } [ { \"quoted\" \\ back");
            assertThat(relay.ending(Relay.End.FINISHED)).isEqualTo(SseRelay.Ending.COMPLETED);
            assertThat(events.used(99)).isEqualTo(new dev.ratelimit.genai.TokenUsage(4, 0, 0, 12));
        }
    }

    @Test
    @DisplayName("a stream cut off mid-element: the partial element held back, an error element and ] close it")
    void cutOffMidElement() throws Exception {
        byte[] stream = ("[" + FIRST + ",\r\n" + LAST.substring(0, 40)).getBytes(StandardCharsets.UTF_8);
        GeminiEvents events = events();
        JsonArrayRelay relay = new JsonArrayRelay(events, GeminiEvents::errorChunk);
        String relayed = feed(relay, stream, 7);
        assertThat(relay.ending(Relay.End.UPSTREAM_FAILED)).isEqualTo(SseRelay.Ending.BROKEN);
        JsonNode whole = OpenAi.JSON.readTree(relayed + new String(relay.brokenNotice(), StandardCharsets.UTF_8));
        assertThat(whole.size()).isEqualTo(2);
        assertThat(whole.get(1).path("error").path("status").asText()).isEqualTo("UNAVAILABLE");
        assertThat(events.nothing()).isFalse();
        assertThat(events.used(4).output())
                .as("the larger of the reported 9 and the text produced, counted")
                .isEqualTo(Math.max(9, new GeminiTokens().text("a ] } [ { \"quoted\" \\ back")))
                .isEqualTo(10);

        JsonArrayRelay empty = new JsonArrayRelay(events(), GeminiEvents::errorChunk);
        assertThat(OpenAi.JSON
                        .readTree(new String(empty.brokenNotice(), StandardCharsets.UTF_8))
                        .size())
                .as("nothing came: the notice is a whole array")
                .isEqualTo(1);
    }

    @Test
    @DisplayName("not an array of objects: the stream ends as broken off, never relayed as it is")
    void notAnArray() {
        JsonArrayRelay relay = new JsonArrayRelay(events(), GeminiEvents::errorChunk);
        assertThatThrownBy(() -> feed(relay, "{\"a\":1}".getBytes(StandardCharsets.UTF_8), 3))
                .isInstanceOf(IOException.class);
        JsonArrayRelay numbers = new JsonArrayRelay(events(), GeminiEvents::errorChunk);
        assertThatThrownBy(() -> feed(numbers, "[1,2]".getBytes(StandardCharsets.UTF_8), 5))
                .isInstanceOf(IOException.class);
    }
}
