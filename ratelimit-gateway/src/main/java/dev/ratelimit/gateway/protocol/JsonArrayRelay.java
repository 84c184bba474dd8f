package dev.ratelimit.gateway.protocol;

import dev.ratelimit.gateway.upstream.Relay;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.UnaryOperator;

/**
 * Reads a stream that is one JSON array sent element by element (Gemini's {@code
 * streamGenerateContent} without {@code alt=sse}: {@code [{...}\r\n,{...}\r\n]}) as its bytes
 * arrive, for a {@link Relay} that passes each element on once it is complete, while an {@link
 * SseRelay.Events} watcher reads it: the array's structure is followed byte by byte (strings and
 * their escapes, nesting), never parsed whole. Holding an element until it is complete keeps what
 * the client got valid JSON: a stream that breaks off ends with an error element and the closing
 * bracket. An element larger than {@value SseRelay#MAX_EVENT_BYTES} bytes ends the stream as broken
 * off. Not thread-safe: one per response, used on its relay's steps.
 */
public final class JsonArrayRelay implements StreamFraming {

    private final SseRelay.Events events;
    private final UnaryOperator<String> errorElement;
    private final ByteArrayOutputStream element = new ByteArrayOutputStream();
    private boolean opened;
    private boolean closed;
    private int elements;
    private int depth; // inside the array: 1; inside an element: more
    private boolean inString;
    private boolean escaped;

    /**
     * @param events reads each element
     * @param errorElement the element a stream that broke off ends with, given the message
     */
    public JsonArrayRelay(SseRelay.Events events, UnaryOperator<String> errorElement) {
        this.events = events;
        this.errorElement = errorElement;
    }

    @Override
    public SseRelay.Events events() {
        return events;
    }

    @Override
    public void onBytes(ByteBuffer bytes, ByteArrayOutputStream out) throws IOException {
        while (bytes.hasRemaining()) {
            byte b = bytes.get();
            if (closed) {
                continue; // nothing may follow the array
            }
            if (depth <= 1) {
                between(b, out);
                continue;
            }
            element.write(b);
            if (element.size() > SseRelay.MAX_EVENT_BYTES) {
                throw new IOException(
                        "the upstream sent an element larger than " + SseRelay.MAX_EVENT_BYTES + " bytes");
            }
            if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (b == '\\') {
                    escaped = true;
                } else if (b == '"') {
                    inString = false;
                }
            } else if (b == '"') {
                inString = true;
            } else if (b == '{' || b == '[') {
                depth++;
            } else if (b == '}' || b == ']') {
                depth--;
                if (depth == 1) {
                    complete(out);
                }
            }
        }
    }

    /** A byte outside every element: the array's brackets, the commas and whitespace between elements. */
    private void between(byte b, ByteArrayOutputStream out) throws IOException {
        if (!opened) {
            if (b == '[') {
                opened = true;
                depth = 1;
                out.write('[');
            } else if (!Character.isWhitespace(b)) {
                throw new IOException("the upstream's stream is not a JSON array");
            }
            return;
        }
        if (b == ']') {
            closed = true;
            depth = 0;
            out.write(']');
        } else if (b == '{' || b == '[') {
            depth = 2;
            element.write(b);
        } else if (b != ',' && !Character.isWhitespace(b)) {
            throw new IOException("the upstream's stream array holds something other than objects");
        }
    }

    /** An element is complete: read, then relayed after its comma. */
    private void complete(ByteArrayOutputStream out) {
        byte[] bytes = element.toByteArray();
        element.reset();
        events.inspect(null, new String(bytes, StandardCharsets.UTF_8));
        byte[] separator = (elements == 0 ? "" : ",\r\n").getBytes(StandardCharsets.UTF_8);
        out.write(separator, 0, separator.length);
        out.write(bytes, 0, bytes.length);
        elements++;
    }

    @Override
    public SseRelay.Ending ending(Relay.End end) {
        if (end == Relay.End.CLIENT_GONE) {
            return SseRelay.Ending.CLIENT_GONE;
        }
        // the closing bracket is the array's end: before it the stream broke off, whatever it said
        return closed ? SseRelay.Ending.COMPLETED : SseRelay.Ending.BROKEN;
    }

    /** The rest of a valid array after a stream that broke off: an error element and the closing bracket. */
    @Override
    public byte[] brokenNotice() {
        String error =
                errorElement.apply("The upstream's stream broke off before it finished; the answer is incomplete.");
        String rest = (opened ? "" : "[") + (elements == 0 ? "" : ",\r\n") + error + "]";
        return rest.getBytes(StandardCharsets.UTF_8);
    }
}
