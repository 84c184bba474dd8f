package dev.ratelimit.gateway;

import dev.ratelimit.gateway.GatewayConfig.Limits;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The OpenAI-compatible server behind the gateway, reached with Jetty's HTTP client: a request goes
 * out with the gateway's own upstream key (never the client's), and its response comes back as a
 * stream that is read as it arrives.
 */
final class Upstream implements AutoCloseable {

    /** The largest non-streamed upstream body the gateway reads into memory. */
    static final int MAX_BODY_BYTES = 64 * 1024 * 1024;

    /** Response headers the gateway never relays: hop-by-hop ones, and those it sets itself. */
    private static final Set<String> DROPPED = Set.of(
            "connection",
            "keep-alive",
            "transfer-encoding",
            "te",
            "trailer",
            "upgrade",
            "proxy-authenticate",
            "proxy-connection",
            "content-length",
            "content-encoding",
            "set-cookie",
            "server",
            "date",
            "www-authenticate",
            "retry-after",
            "retry-after-ms",
            "x-should-retry");

    private final HttpClient client;
    private final String base;
    private final @Nullable String apiKey;
    private final Duration firstByteTimeout;
    private final Duration idleTimeout;
    private final String description;

    Upstream(URI base, @Nullable String apiKey, Limits limits, String description) throws Exception {
        String text = base.toString();
        this.base = text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
        this.apiKey = apiKey == null || apiKey.isBlank() ? null : apiKey.trim();
        this.firstByteTimeout = limits.firstByteTimeout();
        this.idleTimeout = limits.idleTimeout();
        this.description = description;
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("gateway-upstream");
        threads.setDaemon(true);
        this.client = new HttpClient();
        client.setExecutor(threads);
        client.setConnectTimeout(limits.connectTimeout().toMillis());
        client.setIdleTimeout(limits.idleTimeout().toMillis());
        client.setFollowRedirects(false);
        client.setMaxConnectionsPerDestination(1_024);
        client.setMaxRequestsQueuedPerDestination(4_096);
        client.setUserAgentField(null);
        client.start();
    }

    String description() {
        return description;
    }

    /** A response whose headers have arrived; its body is read from {@link #body()}. */
    record Exchange(Request request, Response response, InputStream body) {

        int status() {
            return response.getStatus();
        }

        @Nullable
        String header(String name) {
            return response.getHeaders().get(name);
        }

        boolean isEventStream() {
            String type = header("Content-Type");
            return type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream");
        }

        /** Reads the whole body, up to {@link #MAX_BODY_BYTES}. */
        byte[] readAll() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            try (InputStream in = body) {
                int read;
                while ((read = in.read(buffer)) != -1) {
                    if (bytes.size() + read > MAX_BODY_BYTES) {
                        throw new IOException("the upstream's response exceeds " + MAX_BODY_BYTES + " bytes");
                    }
                    bytes.write(buffer, 0, read);
                }
            }
            return bytes.toByteArray();
        }

        /** Stops the upstream response; closing its unfinished body aborts it. */
        void abort() {
            try {
                body.close();
            } catch (IOException e) {
                // aborting anyway
            }
            request.abort(new IOException("the gateway's client went away"));
        }
    }

    /** The upstream could not be reached or did not answer in time; nothing was produced. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final boolean timeout;

        Failure(String message, boolean timeout, @Nullable Throwable cause) {
            super(message, cause);
            this.timeout = timeout;
        }

        /** How the settlement metrics name this ending. */
        String ending() {
            return timeout ? "upstream_timeout" : "upstream_unreachable";
        }

        /** Answers the client: 504 for a timeout, 502 otherwise, in OpenAI's error shape. */
        void answer(HttpServletResponse response) throws IOException {
            OpenAi.error(response, timeout ? 504 : 502, "upstream_error", ending(), null, String.valueOf(getMessage()));
        }
    }

    /**
     * Sends a request and waits for the response headers.
     *
     * @param pathAndQuery the path below the upstream's base, such as {@code /chat/completions}
     */
    Exchange send(String method, String pathAndQuery, @Nullable String contentType, byte[] body)
            throws Failure, InterruptedException {
        Request request = client.newRequest(base + pathAndQuery)
                .method(method)
                .idleTimeout(idleTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .headers(headers -> {
                    headers.remove(HttpHeader.USER_AGENT);
                    if (apiKey != null) {
                        headers.put(HttpHeader.AUTHORIZATION, "Bearer " + apiKey);
                    }
                    headers.put(HttpHeader.ACCEPT, "application/json, text/event-stream");
                });
        if (body.length > 0 || method.equals("POST") || method.equals("PUT") || method.equals("PATCH")) {
            request.body(new BytesRequestContent(contentType == null ? "application/json" : contentType, body));
        }
        InputStreamResponseListener listener = new InputStreamResponseListener();
        request.send(listener);
        try {
            Response response = listener.get(firstByteTimeout.toMillis(), TimeUnit.MILLISECONDS);
            return new Exchange(request, response, listener.getInputStream());
        } catch (TimeoutException e) {
            request.abort(e);
            throw new Failure("The upstream did not answer within " + firstByteTimeout.toMillis() + " ms.", true, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            boolean timeout = cause instanceof TimeoutException;
            throw new Failure("The upstream could not be reached: " + cause, timeout, cause);
        }
    }

    /**
     * Copies the upstream's response headers that the client should see; {@code Retry-After} and
     * {@code retry-after-ms} only when the upstream itself refused the request.
     */
    static void copyHeaders(Exchange exchange, HttpServletResponse response) {
        boolean refusal = exchange.status() == 429 || exchange.status() == 503;
        for (HttpField field : exchange.response().getHeaders()) {
            String name = field.getLowerCaseName();
            boolean retry =
                    name.equals("retry-after") || name.equals("retry-after-ms") || name.equals("x-should-retry");
            if ((DROPPED.contains(name) && !(retry && refusal)) || name.startsWith("x-ratelimit-")) {
                continue; // the gateway's own rate-limit headers describe the tenant's budgets
            }
            response.addHeader(field.getName(), field.getValue());
        }
    }

    @Override
    public void close() {
        try {
            client.stop();
        } catch (Exception e) {
            // shutting down anyway
        }
    }
}
