package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;
import org.jspecify.annotations.Nullable;

/**
 * The answer to one call, written as it goes (blocking): a status and headers, then a whole body
 * ({@link #json}, {@link #write}) or a stream ({@link #startStream}, {@link #event}, {@link #send}).
 * What a behaviour leaves unfinished the fake finishes when it returns.
 */
public final class Exchange {

    private final Response response;
    private final String id;
    private final long created;
    private @Nullable OutputStream out;
    private boolean ended;

    Exchange(Response response, String id, long created) {
        this.response = response;
        this.id = id;
        this.created = created;
    }

    /** The answer's id, unique in this fake: its name and a sequence number, such as {@code mock-7}. */
    String id() {
        return id;
    }

    /** When the answer was made, in epoch seconds of the fake's clock. */
    long created() {
        return created;
    }

    /**
     * Sets the status, before anything is written.
     *
     * @param status the HTTP status
     * @return this exchange
     */
    public Exchange status(int status) {
        response.setStatus(status);
        return this;
    }

    /**
     * Sets a response header, before anything is written.
     *
     * @param name the header's name
     * @param value its value
     * @return this exchange
     */
    public Exchange header(String name, String value) {
        response.getHeaders().put(name, value);
        return this;
    }

    /**
     * Adds a response header beside those of the same name, before anything is written.
     *
     * @param name the header's name
     * @param value its value
     * @return this exchange
     */
    public Exchange addHeader(String name, String value) {
        response.getHeaders().add(name, value);
        return this;
    }

    /**
     * Returns whether the status and headers have gone out.
     *
     * @return whether the answer has begun
     */
    public boolean committed() {
        return response.isCommitted();
    }

    /**
     * Writes a whole JSON answer with its length.
     *
     * @param status the HTTP status
     * @param body the JSON
     * @throws IOException if the client has gone
     */
    public void json(int status, JsonNode body) throws IOException {
        write(status, "application/json", Json.MAPPER.writeValueAsBytes(body));
    }

    /**
     * Writes a whole JSON answer with its length.
     *
     * @param status the HTTP status
     * @param body the JSON text
     * @throws IOException if the client has gone
     */
    public void json(int status, String body) throws IOException {
        write(status, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Writes a whole answer with its length and ends it.
     *
     * @param status the HTTP status
     * @param contentType the content type
     * @param body the body
     * @throws IOException if the client has gone
     */
    public void write(int status, String contentType, byte[] body) throws IOException {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        OutputStream stream = out();
        stream.write(body);
        finish();
    }

    /**
     * Starts a streamed answer: status 200 unless set, this content type, the headers sent at once.
     *
     * @param contentType the content type, such as {@code text/event-stream}
     * @return this exchange
     * @throws IOException if the client has gone
     */
    public Exchange startStream(String contentType) throws IOException {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
        out().flush();
        return this;
    }

    /**
     * Sends text as it is and flushes it.
     *
     * @param text the text
     * @throws IOException if the client has gone
     */
    public void send(String text) throws IOException {
        OutputStream stream = out();
        stream.write(text.getBytes(StandardCharsets.UTF_8));
        stream.flush();
    }

    /**
     * Sends one server-sent event, {@code data: <data>}, and flushes it.
     *
     * @param data the event's data
     * @throws IOException if the client has gone
     */
    public void event(String data) throws IOException {
        send("data: " + data + "\n\n");
    }

    /**
     * Sends one named server-sent event, {@code event: <name>} and {@code data: <data>}, and flushes it.
     *
     * @param name the event's name
     * @param data the event's data
     * @throws IOException if the client has gone
     */
    public void event(String name, String data) throws IOException {
        send("event: " + name + "\ndata: " + data + "\n\n");
    }

    /**
     * Breaks the answer off: the connection closes without the answer's end.
     *
     * @throws BrokenOff always, for the fake to abort the connection
     */
    public void breakOff() {
        throw new BrokenOff();
    }

    private OutputStream out() {
        if (out == null) {
            out = Content.Sink.asOutputStream(response);
        }
        return out;
    }

    /** Ends the answer if the behaviour did not: the rest of a stream, or an empty body. */
    void finish() throws IOException {
        if (!ended) {
            ended = true;
            out().close();
        }
    }

    /** Thrown to break an answer off, as an upstream that dies mid-answer does. */
    public static final class BrokenOff extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BrokenOff() {
            super("the fake model breaks the answer off", null, false, false);
        }
    }
}
