package dev.ratelimit.gateway;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.FilterMapping;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.jspecify.annotations.Nullable;

/**
 * The gateway server: an OpenAI-compatible API on embedded Jetty 12 that authenticates API keys,
 * keeps every tenant within its request and token budgets and concurrency cap, and forwards to an
 * OpenAI-compatible upstream, or to a built-in mock model when none is configured.
 *
 * <p>Environment: {@code PORT} (default 8080; 0 picks a free port), {@code GATEWAY_CONFIG} (a YAML
 * configuration file; the built-in default otherwise), {@code UPSTREAM_URL} and {@code
 * UPSTREAM_API_KEY} (the upstream's base URL, such as {@code https://api.openai.com/v1}, and the key
 * the gateway sends it), {@code REDIS_URL} (budgets and slots in Redis through Lettuce instead of
 * this process's memory), {@code RATE_LIMIT_DISABLED=true} (the kill switch). It listens on
 * 127.0.0.1 only.
 */
public final class GatewayServer {

    static final String HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 8080;

    private final Server server;
    private final int port;
    private final GatewayStore store;
    private final Gateway gateway;
    private final @Nullable MockModel mock;
    private final boolean limiterDisabled;

    private GatewayServer(
            Server server,
            int port,
            GatewayStore store,
            Gateway gateway,
            @Nullable MockModel mock,
            boolean limiterDisabled) {
        this.server = server;
        this.port = port;
        this.store = store;
        this.gateway = gateway;
        this.mock = mock;
        this.limiterDisabled = limiterDisabled;
    }

    /**
     * Starts the gateway from the environment, prints where it listens and a line to try, and runs
     * until the process is stopped.
     *
     * @param args ignored
     * @throws Exception if the server cannot start
     */
    public static void main(String[] args) throws Exception {
        GatewayServer gateway;
        try {
            gateway = start(System.getenv(), null);
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("ratelimit gateway: cannot start: " + e.getMessage());
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "gateway-shutdown"));
        gateway.printBanner(System.out);
        gateway.server.join();
    }

    /**
     * Starts a gateway.
     *
     * @param environment the variables described in the class documentation
     * @param clock the limiter's time, for tests; {@code null} takes the store's (Redis {@code TIME})
     */
    static GatewayServer start(Map<String, String> environment, @Nullable Clock clock) throws Exception {
        int port = port(environment.get("PORT"));
        GatewayConfig config = GatewayConfig.load(environment.get("GATEWAY_CONFIG"));
        URI upstreamUrl = upstreamUrl(environment.get("UPSTREAM_URL"));
        List<AutoCloseable> opened = new ArrayList<>();
        GatewayStore store = GatewayStore.select(environment.get("REDIS_URL"));
        opened.add(store);
        try {
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            boolean disabled = SlidingWindowRateLimiter.disabledBy(environment);
            SlidingWindowRateLimiter.Builder limiterBuilder = SlidingWindowRateLimiter.builder(store.store())
                    .meterRegistry(registry)
                    .name("gateway")
                    .disabled(disabled)
                    .failOpen(config.limits().failOpen());
            if (clock != null) {
                limiterBuilder.clock(clock);
            }
            RateLimiter limiter = limiterBuilder.build();
            GatewayMetrics metrics = new GatewayMetrics(registry);
            Slots slots = disabled
                    ? Slots.unlimited()
                    : store.redis() != null
                            ? new RedisSlots(store.redis(), config.limits().slotLease(), registry)
                            : new LocalSlots();
            opened.add(0, slots);
            TokenCounter tokens = new TokenCounter();

            MockModel mock = null;
            Upstream upstream;
            if (upstreamUrl == null) {
                mock = MockModel.start(tokens, config.models().keySet(), clock != null ? clock : Clock.systemUTC());
                opened.add(0, mock);
                upstream = new Upstream(mock.baseUrl(), null, config.limits(), "built-in mock model");
            } else {
                upstream = new Upstream(
                        upstreamUrl, environment.get("UPSTREAM_API_KEY"), config.limits(), upstreamUrl.toString());
            }
            opened.add(0, upstream);
            Gateway gateway = new Gateway(
                    config,
                    tokens,
                    new Admission(limiter, slots, metrics),
                    Gateway.meteredResponses(),
                    metrics,
                    upstream,
                    slots,
                    store.description());
            StatusReport status = new StatusReport(
                    limiter,
                    config,
                    slots,
                    Map.of(
                            "store",
                            store.description(),
                            "slots",
                            slots.description(),
                            "upstream",
                            upstream.description(),
                            "limiter",
                            disabled ? "DISABLED (kill switch): every request passes" : "enabled"));

            Server server = new Server();
            ServerConnector connector = new ServerConnector(server);
            connector.setHost(HOST);
            connector.setPort(port);
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath("/");
            context.addFilter(
                    new FilterHolder(new ApiKeyFilter(config.keys(), metrics)),
                    "/v1/*",
                    EnumSet.of(DispatcherType.REQUEST));
            context.addServlet(
                    new ServletHolder(new MeteredServlet(MeteredServlet.Kind.CHAT, gateway)), "/v1/chat/completions");
            context.addServlet(
                    new ServletHolder(new MeteredServlet(MeteredServlet.Kind.EMBEDDINGS, gateway)), "/v1/embeddings");
            ServletHolder passthrough = new ServletHolder(PassthroughServlet.NAME, new PassthroughServlet(gateway));
            context.addServlet(passthrough, "/v1/*");
            // after ApiKeyFilter (mapped by path, so it runs first): the body, then the library's filter
            filterServlet(context, new PassthroughServlet.BodyFirst(gateway), "body-first");
            filterServlet(context, PassthroughServlet.rateLimitFilter(limiter, config), "rate-limit");
            context.addServlet(new ServletHolder(new InfoServlets.Health(gateway)), "/health");
            context.addServlet(new ServletHolder(new InfoServlets.Metrics(registry)), "/metrics");
            context.addServlet(new ServletHolder(new InfoServlets.StatusJson(status)), "/status.json");
            context.addServlet(new ServletHolder(new InfoServlets.StatusPage()), "/");
            server.setHandler(context);
            try {
                server.start();
            } catch (IOException e) {
                server.stop();
                if (e instanceof BindException || e.getCause() instanceof BindException) {
                    throw new IOException(
                            "port " + port + " on " + HOST + " is in use; set PORT to another port (PORT=0 picks"
                                    + " a free one)",
                            e);
                }
                throw e;
            }
            GatewayServer started = new GatewayServer(server, connector.getLocalPort(), store, gateway, mock, disabled);
            opened.clear();
            return started;
        } finally {
            for (AutoCloseable resource : opened) {
                resource.close();
            }
        }
    }

    /** Maps a filter to the pass-through servlet by its name, after the filters mapped so far. */
    private static void filterServlet(ServletContextHandler context, Filter filter, String name) {
        FilterHolder holder = new FilterHolder(filter);
        holder.setName(name);
        FilterMapping mapping = new FilterMapping();
        mapping.setFilterName(name);
        mapping.setServletName(PassthroughServlet.NAME);
        mapping.setDispatcherTypes(EnumSet.of(DispatcherType.REQUEST));
        context.getServletHandler().addFilter(holder, mapping);
    }

    int port() {
        return port;
    }

    String baseUrl() {
        return "http://" + HOST + ":" + port;
    }

    Gateway gateway() {
        return gateway;
    }

    String curlLine() {
        return "curl " + baseUrl() + "/v1/chat/completions -H 'Authorization: Bearer demo-free'"
                + " -H 'Content-Type: application/json'"
                + " -d '{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'";
    }

    void printBanner(PrintStream out) {
        out.println("ratelimit gateway listening on " + baseUrl());
        out.println("upstream: " + gateway.upstream().description());
        out.println("store:    " + store.description());
        out.println("config:   " + gateway.config().source() + " (" + describe(gateway.config())
                + (limiterDisabled ? "; limiter DISABLED by the kill switch" : "") + ")");
        out.println("try:      " + curlLine());
        out.println("          (OpenAI clients: base URL " + baseUrl() + "/v1, API key demo-free, demo-pro or"
                + " demo-enterprise; the 6th demo-free call within a minute gets 429)");
        out.println("see:      " + baseUrl() + "/ (status), " + baseUrl() + "/metrics (Prometheus), " + baseUrl()
                + "/health");
        out.flush();
    }

    private static String describe(GatewayConfig config) {
        return config.tiers().values().stream()
                .map(tier -> tier.name() + ": "
                        + tier.tier().windows().stream()
                                .map(w -> w.limit() + (w.isTokens() ? " tokens" : "") + "/"
                                        + Window.of(1, w.length()).name())
                                .collect(Collectors.joining(" "))
                        + ", " + tier.maxConcurrent() + " concurrent")
                .collect(Collectors.joining("; "));
    }

    void close() {
        try {
            server.stop();
        } catch (Exception e) {
            // shutting down anyway
        } finally {
            gateway.upstream().close();
            if (mock != null) {
                mock.close();
            }
            gateway.slots().close();
            store.close();
        }
    }

    private static @Nullable URI upstreamUrl(@Nullable String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            URI uri = new URI(value.trim());
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new IllegalArgumentException(
                        "UPSTREAM_URL must be an http(s) URL such as https://api.openai.com/v1, was '" + value + "'");
            }
            return uri;
        } catch (java.net.URISyntaxException e) {
            throw new IllegalArgumentException("UPSTREAM_URL is not a URL: " + e.getMessage(), e);
        }
    }

    private static int port(@Nullable String value) {
        if (value == null || value.isBlank()) {
            return DEFAULT_PORT;
        }
        try {
            int port = Integer.parseInt(value.trim());
            if (port < 0 || port > 65_535) {
                throw new NumberFormatException();
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("PORT must be a number from 0 to 65535, was '" + value + "'", e);
        }
    }
}
