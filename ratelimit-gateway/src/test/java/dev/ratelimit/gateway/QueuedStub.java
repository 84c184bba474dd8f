package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import org.eclipse.jetty.server.Server;
import org.jspecify.annotations.Nullable;

/**
 * A provider's stub upstream on a {@link StubServer}: it records what each request carried and
 * answers it with the next behaviour a test queued, or with the provider's plain answer.
 *
 * @param <B> how the stub answers one request
 * @param <R> what it records of one request
 */
abstract class QueuedStub<B, R> implements AutoCloseable {

    private final Server server;
    private final int port;
    private final BlockingQueue<B> queue = new LinkedBlockingQueue<>();
    private final List<R> received = new CopyOnWriteArrayList<>();

    QueuedStub() throws Exception {
        // no request reaches serve before the subclass is built: nobody knows the port until then
        this.server = StubServer.start(this::serve);
        this.port = StubServer.port(server);
    }

    /** Records the request and answers it. */
    abstract void serve(HttpServletRequest request, HttpServletResponse response) throws IOException;

    /** The stub's loopback port. */
    final int port() {
        return port;
    }

    /** Queues how the next unanswered request is answered. */
    final void enqueue(B behaviour) {
        queue.add(behaviour);
    }

    /** Drops the behaviours not used yet: plain answers from here on. */
    final void clearQueue() {
        queue.clear();
    }

    /** What the stub has received, oldest first. */
    final List<R> received() {
        return received;
    }

    /** Records one request and returns the behaviour queued for it, or {@code null} for the plain answer. */
    final @Nullable B next(R request) {
        received.add(request);
        return queue.poll();
    }

    /** The request's body as JSON: a null node when it has none. */
    static JsonNode body(HttpServletRequest request) throws IOException {
        byte[] bytes = request.getInputStream().readAllBytes();
        return bytes.length == 0 ? OpenAi.JSON.nullNode() : OpenAi.JSON.readTree(bytes);
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException(getClass().getSimpleName() + " did not stop", e);
        }
    }
}
