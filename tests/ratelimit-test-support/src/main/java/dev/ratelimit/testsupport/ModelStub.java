package dev.ratelimit.testsupport;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A model provider's API on the JDK's HTTP server, on a free port of the loopback address, for the
 * framework integrations' tests (the frameworks' own clients call it): counts the calls reaching it,
 * answers them all with an error when told to, and leaves the answers to its provider's subclass. Each
 * call is served on its own thread, so concurrent calls overlap. Registered as a JUnit extension
 * ({@code @RegisterExtension}), it closes after each test.
 */
public abstract class ModelStub implements AutoCloseable, AfterEachCallback {

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final AtomicInteger calls = new AtomicInteger();
    private volatile int status = 200;

    /**
     * Starts the stub on a free port of the loopback address.
     *
     * @throws IOException if the server cannot bind
     */
    @SuppressWarnings("this-escape") // no call can arrive before the constructor returns the port
    protected ModelStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::serve);
        server.setExecutor(threads);
        server.start();
    }

    /**
     * Returns the server's root URL, {@code http://127.0.0.1:<port>}, for clients that add the API's
     * path themselves.
     *
     * @return the server's root URL
     */
    public String rootUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /**
     * Returns how many calls reached the stub.
     *
     * @return the calls so far
     */
    public int calls() {
        return calls.get();
    }

    /**
     * Answers every later call with this status and the provider's error body.
     *
     * @param status the HTTP status, such as 400 or 500
     */
    public void failWith(int status) {
        this.status = status;
    }

    /**
     * Returns the provider's error body for a failing status.
     *
     * @param status the HTTP status
     * @return the JSON body
     */
    protected abstract String errorBody(int status);

    /**
     * Answers one call that is not to fail.
     *
     * @param exchange the call, its request body already read
     * @param body the request body
     * @throws IOException if the answer cannot be written
     */
    protected abstract void answer(HttpExchange exchange, String body) throws IOException;

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            calls.incrementAndGet();
            int failing = status;
            if (failing != 200) {
                send(exchange, failing, "application/json", errorBody(failing));
                return;
            }
            answer(exchange, body);
        }
    }

    /**
     * Sends a whole answer.
     *
     * @param exchange the call
     * @param status the HTTP status
     * @param type the content type
     * @param body the body
     * @throws IOException if it cannot be written
     */
    protected static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    /**
     * Starts a stream of server-sent events: status 200, {@code text/event-stream}.
     *
     * @param exchange the call
     * @return where the events go
     * @throws IOException if the headers cannot be written
     */
    protected static OutputStream startEvents(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        return exchange.getResponseBody();
    }

    /**
     * Sends one server-sent event, {@code data: <data>}, and flushes it.
     *
     * @param out the stream
     * @param data the event's data
     * @throws IOException if it cannot be written
     */
    protected static void event(OutputStream out, String data) throws IOException {
        out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /**
     * Closes the stub after the test that registered it.
     *
     * @param context the test's context
     */
    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
