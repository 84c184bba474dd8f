package dev.ratelimit.demo;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.servlet.RateLimitFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.DispatcherType;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.jspecify.annotations.Nullable;

/**
 * The demo server: an OpenAI-shaped mock {@code POST /v1/chat/completions} on embedded Jetty 12,
 * behind an API-key filter and the {@link RateLimitFilter}.
 *
 * <p>Environment: {@code PORT} (default 8080; 0 picks a free port), {@code REDIS_URL} (use Redis
 * through Lettuce instead of the embedded in-memory store), {@code RATELIMIT_TIERS_FILE} (a tier
 * policy properties file, see {@link TierPolicy#load(Path)}), {@code RATE_LIMIT_DISABLED=true} (the
 * kill switch). It listens on 127.0.0.1 only.
 */
public final class DemoServer {

    static final String HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 8080;

    private final Server server;
    private final int port;
    private final DemoStore store;
    private final TierPolicy tiers;
    private final boolean limiterDisabled;

    private DemoServer(Server server, int port, DemoStore store, TierPolicy tiers, boolean limiterDisabled) {
        this.server = server;
        this.port = port;
        this.store = store;
        this.tiers = tiers;
        this.limiterDisabled = limiterDisabled;
    }

    /**
     * Starts the demo from the environment, prints where it listens and a curl line to try, and
     * runs until the process is stopped.
     *
     * @param args ignored
     * @throws Exception if the server cannot start
     */
    public static void main(String[] args) throws Exception {
        DemoServer demo;
        try {
            demo = start(System.getenv());
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("ratelimit demo: cannot start: " + e.getMessage());
            System.exit(1);
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(demo::close, "demo-shutdown"));
        demo.printBanner(System.out);
        demo.server.join();
    }

    static DemoServer start(Map<String, String> environment) throws Exception {
        int port = port(environment.get("PORT"));
        TierPolicy tiers = tiers(environment.get("RATELIMIT_TIERS_FILE"));
        DemoStore store = DemoStore.select(environment.get("REDIS_URL"));
        boolean started = false;
        try {
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            boolean disabled = killSwitch(environment);
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store.store())
                    .meterRegistry(registry)
                    .name("demo")
                    .disabled(disabled)
                    .build();

            Server server = new Server();
            ServerConnector connector = new ServerConnector(server);
            connector.setHost(HOST);
            connector.setPort(port);
            server.addConnector(connector);

            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath("/");
            context.addFilter(
                    new FilterHolder(new ApiKeyFilter(ApiKeyFilter.DEMO_KEYS)),
                    "/v1/*",
                    EnumSet.of(DispatcherType.REQUEST));
            context.addFilter(
                    new FilterHolder(RateLimitFilter.builder(limiter, tiers)
                            .exemptPaths("/", "/health", "/metrics")
                            .openAiHeaders(true) // the demo speaks OpenAI's API: its clients read these
                            .build()),
                    "/*",
                    EnumSet.of(DispatcherType.REQUEST));
            context.addServlet(
                    new ServletHolder(new ChatCompletionsServlet(Clock.systemUTC())), "/v1/chat/completions");
            context.addServlet(new ServletHolder(new InfoServlets.Health(store.kind())), "/health");
            context.addServlet(new ServletHolder(new InfoServlets.Metrics(registry)), "/metrics");
            DemoServer[] self = new DemoServer[1];
            context.addServlet(new ServletHolder(new InfoServlets.Status(() -> self[0].statusPage())), "/");
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
            DemoServer demo = new DemoServer(server, connector.getLocalPort(), store, tiers, disabled);
            self[0] = demo;
            started = true;
            return demo;
        } finally {
            if (!started) {
                store.close();
            }
        }
    }

    int port() {
        return port;
    }

    String baseUrl() {
        return "http://" + HOST + ":" + port;
    }

    String curlLine() {
        return "curl -i " + baseUrl() + "/v1/chat/completions -H 'Authorization: Bearer demo-free'"
                + " -H 'Content-Type: application/json'"
                + " -d '{\"model\":\"mock\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'";
    }

    void printBanner(PrintStream out) {
        out.println("ratelimit demo listening on " + baseUrl());
        out.println("store: " + store.description());
        out.println("tiers: " + describe(tiers) + (limiterDisabled ? " (limiter DISABLED by the kill switch)" : ""));
        out.println("try:   " + curlLine());
        out.println("       (the 6th call with demo-free within a minute answers 429 with Retry-After;"
                + " keys: demo-free, demo-pro, demo-enterprise)");
        out.println(
                "see:   " + baseUrl() + "/ (status), " + baseUrl() + "/metrics (Prometheus), " + baseUrl() + "/health");
        out.flush();
    }

    String statusPage() {
        StringBuilder page = new StringBuilder();
        page.append("ratelimit demo: an OpenAI-shaped mock chat API behind an exact sliding-window rate limiter\n\n");
        page.append("store:   ").append(store.description()).append('\n');
        page.append("limiter: ")
                .append(limiterDisabled ? "DISABLED (kill switch): every request passes" : "enabled, fails open")
                .append('\n');
        page.append("tiers:\n");
        for (Tier tier : tiers.tiers().values()) {
            page.append("  ")
                    .append(String.format("%-12s", tier.name()))
                    .append(describe(tier))
                    .append(tier.equals(tiers.defaultTier()) ? "  (default)" : "")
                    .append('\n');
        }
        page.append("keys:    demo-free, demo-pro, demo-enterprise (Authorization: Bearer <key>)\n\n");
        page.append("try:\n  ").append(curlLine()).append("\n\n");
        page.append("endpoints: POST /v1/chat/completions, GET /metrics, GET /health\n");
        return page.toString();
    }

    void close() {
        try {
            server.stop();
        } catch (Exception e) {
            // shutting down anyway
        } finally {
            store.close();
        }
    }

    private static String describe(TierPolicy tiers) {
        List<String> parts = new ArrayList<>();
        for (Tier tier : tiers.tiers().values()) {
            parts.add(tier.name() + " "
                    + tier.windows().stream()
                            .sorted((a, b) -> a.length().compareTo(b.length()))
                            .map(window -> window.limit() + "/" + window.name())
                            .collect(Collectors.joining(" ")));
        }
        return String.join(", ", parts);
    }

    private static String describe(Tier tier) {
        return tier.windows().stream()
                .sorted((a, b) -> a.length().compareTo(b.length()))
                .map(DemoServer::describe)
                .collect(Collectors.joining(", "));
    }

    private static String describe(Window window) {
        return window.limit() + " per " + window.name() + " (" + window.lengthSeconds() + " s)";
    }

    /** The core's rule, applied to the given environment: the system property wins over the variable. */
    private static boolean killSwitch(Map<String, String> environment) {
        String property = System.getProperty(SlidingWindowRateLimiter.DISABLED_PROPERTY);
        if (property != null) {
            return Boolean.parseBoolean(property.trim());
        }
        String variable = environment.get(SlidingWindowRateLimiter.DISABLED_ENVIRONMENT_VARIABLE);
        return variable != null && Boolean.parseBoolean(variable.trim());
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

    private static TierPolicy tiers(@Nullable String file) throws IOException {
        if (file == null || file.isBlank()) {
            return TierPolicy.defaults();
        }
        return TierPolicy.load(Path.of(file.trim()));
    }
}
