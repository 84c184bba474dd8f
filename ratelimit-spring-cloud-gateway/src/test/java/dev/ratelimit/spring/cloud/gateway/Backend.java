package dev.ratelimit.spring.cloud.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** The service behind the gateway: a JDK HTTP server answering 200 and counting the requests of each key. */
final class Backend {

    private static final Map<String, AtomicInteger> REQUESTS = new ConcurrentHashMap<>();
    private static final HttpServer SERVER = start();

    private Backend() {}

    /** The port the backend listens on, on 127.0.0.1. */
    static int port() {
        return SERVER.getAddress().getPort();
    }

    /** How many requests of {@code key} reached the backend. */
    static int requests(String key) {
        AtomicInteger count = REQUESTS.get(key);
        return count == null ? 0 : count.get();
    }

    private static HttpServer start() {
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
            server.createContext("/", exchange -> {
                String key = exchange.getRequestHeaders().getFirst("X-Api-Key");
                REQUESTS.computeIfAbsent(key == null ? "" : key, k -> new AtomicInteger())
                        .incrementAndGet();
                byte[] body = ("backend " + exchange.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
                exchange.close();
            });
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
