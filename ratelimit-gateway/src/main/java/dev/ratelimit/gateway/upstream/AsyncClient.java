package dev.ratelimit.gateway.upstream;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.IdleTimeout;
import org.jspecify.annotations.Nullable;

/**
 * One client's request answered asynchronously: the servlet returns its thread at once, and the
 * answer is written later, by whichever thread has its next part (the upstream client's, or the
 * server's when the client can take more bytes), until {@link #complete}.
 *
 * <p>The client's idle timeout ({@code server.client-idle-timeout-ms}) is the connection's: it
 * times a client that sends its request slowly or leaves the connection silent between requests.
 * While the gateway waits for the upstream ({@link #quiet}) the connection has nothing pending and
 * no timeout (the upstream's timeouts run instead: Jetty would otherwise fail an asynchronous
 * request that waits longer than the connection's idle timeout); while a write waits for a client
 * that does not take the bytes ({@link #watch}) it runs again, and a client silent that long fails
 * the write.
 */
public final class AsyncClient {

    private final HttpServletRequest request;
    private final HttpServletResponse response;
    private final AsyncContext async;
    private final @Nullable EndPoint endPoint;
    private final long idleMillis;
    private final AtomicBoolean completed = new AtomicBoolean();

    private AsyncClient(
            HttpServletRequest request,
            HttpServletResponse response,
            AsyncContext async,
            @Nullable EndPoint endPoint,
            long idleMillis) {
        this.request = request;
        this.response = response;
        this.async = async;
        this.endPoint = endPoint;
        this.idleMillis = idleMillis;
    }

    /**
     * Starts answering {@code request} asynchronously, with no timeout of the servlet API's own: the
     * gateway's timeouts end it.
     *
     * @param clientIdle the connection's idle timeout, {@code server.client-idle-timeout-ms}
     */
    public static AsyncClient start(HttpServletRequest request, HttpServletResponse response, Duration clientIdle) {
        AsyncContext async = request.startAsync(request, response);
        async.setTimeout(0);
        EndPoint endPoint = null;
        ServletContextRequest jetty = ServletContextRequest.getServletContextRequest(request);
        if (jetty != null) {
            endPoint = jetty.getConnectionMetaData().getConnection().getEndPoint();
        }
        return new AsyncClient(request, response, async, endPoint, clientIdle.toMillis());
    }

    public HttpServletRequest request() {
        return request;
    }

    public HttpServletResponse response() {
        return response;
    }

    /** The gateway waits for the upstream: the connection has no idle timeout meanwhile. */
    public void quiet() {
        EndPoint connection = endPoint;
        if (connection != null) {
            connection.setIdleTimeout(0);
        }
    }

    /** A write waits for the client: the idle timeout runs from now. */
    public void watch() {
        EndPoint connection = endPoint;
        if (connection != null) {
            if (connection instanceof IdleTimeout timed) {
                timed.notIdle(); // the wait for the upstream before this write was not the client's silence
            }
            connection.setIdleTimeout(idleMillis);
        }
    }

    /** Ends the answer, once: the connection's idle timeout is back for the next request on it. */
    public void complete() {
        if (completed.compareAndSet(false, true)) {
            watch();
            async.complete();
        }
    }

    boolean isCompleted() {
        return completed.get();
    }
}
