package dev.ratelimit.gateway.web;

import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.metrics.GatewayMetrics;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.http.RetryAfter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.io.Connection;

/**
 * {@code server.max-connections}: the API listener counts its open connections, and a connection
 * opened while that many were open already is answered, on each request, 503 in the shape of the
 * caller's API ({@code server_overloaded}, {@code Retry-After: 1}, {@code Connection: close}), so a
 * client beyond the limit learns it at once and retries, never waiting in a queue it cannot see.
 * The connections within the limit are served as usual; {@code /health} is never refused.
 */
public final class ConnectionLimit implements Connection.Listener, Filter {

    /** When a client refused for the limit may retry. */
    static final Duration RETRY = Duration.ofSeconds(1);

    private final int max;
    private final GatewayMetrics metrics;
    private final AtomicInteger open = new AtomicInteger();
    private final Set<Connection> beyond = ConcurrentHashMap.newKeySet();

    public ConnectionLimit(int max, GatewayMetrics metrics) {
        this.max = max;
        this.metrics = metrics;
        metrics.connections(open);
    }

    @Override
    public void onOpened(Connection connection) {
        if (open.incrementAndGet() > max) {
            beyond.add(connection);
        }
    }

    @Override
    public void onClosed(Connection connection) {
        open.decrementAndGet();
        beyond.remove(connection);
    }

    /** The API listener's connections open now. */
    int open() {
        return open.get();
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        ServletContextRequest jetty = ServletContextRequest.getServletContextRequest(request);
        if (beyond.isEmpty()
                || jetty == null
                || !beyond.contains(jetty.getConnectionMetaData().getConnection())) {
            chain.doFilter(req, res);
            return;
        }
        HttpServletResponse response = (HttpServletResponse) res;
        response.setHeader("Connection", "close");
        RetryAfter.write(RETRY, response::setHeader);
        metrics.refused("connection", 503, "server_overloaded");
        ApiErrors.write(
                Anthropic.isAnthropicCaller(request) ? Protocol.ANTHROPIC : Protocol.OPENAI,
                response,
                503,
                "server_error",
                "server_overloaded",
                null,
                "The gateway has " + max + " connections open, its limit (server.max-connections); retry in "
                        + RETRY.toSeconds() + " second.");
    }
}
