package dev.ratelimit.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real embedded Jetty on a free loopback port: a test authentication filter (API key to user and
 * tier, the way an application's auth layer would), then the filter under test, then an
 * application servlet that counts the requests reaching it.
 */
final class TestServer {

    /** A key of the test auth filter: who a bearer key authenticates as. */
    record Account(String user, String tier) {}

    private final Server server;
    private final URI base;
    private final HttpClient client;
    final AtomicInteger appHits;

    private TestServer(Server server, URI base, AtomicInteger appHits) {
        this.server = server;
        this.base = base;
        this.appHits = appHits;
        this.client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(10))
                .version(HttpClient.Version.HTTP_1_1)
                .build();
    }

    static TestServer start(Filter rateLimitFilter, Map<String, Account> accounts) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(64, 4);
        threads.setName("test-jetty");
        Server server = new Server(threads);
        ServerConnector connector = new ServerConnector(server, 1, 1);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        AtomicInteger appHits = new AtomicInteger();
        context.addFilter(
                new FilterHolder((jakarta.servlet.Filter) (req, res, chain) -> {
                    HttpServletRequest request = (HttpServletRequest) req;
                    String header = request.getHeader("Authorization");
                    if (header != null && header.startsWith("Bearer ")) {
                        Account account = accounts.get(header.substring("Bearer ".length()));
                        if (account == null) {
                            ((HttpServletResponse) res).sendError(401);
                            return;
                        }
                        request.setAttribute(RateLimitFilter.USER_ATTRIBUTE, account.user());
                        request.setAttribute(RateLimitFilter.TIER_ATTRIBUTE, account.tier());
                    }
                    chain.doFilter(req, res);
                }),
                "/*",
                EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(rateLimitFilter), "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addServlet(
                new ServletHolder(new HttpServlet() {
                    private static final long serialVersionUID = 1L;

                    @Override
                    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                        appHits.incrementAndGet();
                        resp.setContentType("application/json");
                        resp.getWriter().write("{\"ok\":true}");
                    }
                }),
                "/*");
        server.setHandler(context);
        server.start();
        return new TestServer(server, URI.create("http://127.0.0.1:" + connector.getLocalPort()), appHits);
    }

    HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
        return client.send(request(path, headers), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }

    HttpRequest request(String path, String... headers) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) {
            builder.headers(headers);
        }
        return builder.GET().build();
    }

    HttpClient client() {
        return client;
    }

    void close() throws Exception {
        server.stop();
    }
}
