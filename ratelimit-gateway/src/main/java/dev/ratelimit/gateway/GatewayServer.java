package dev.ratelimit.gateway;

import dev.ratelimit.api.Window;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.config.ConfigReloader;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.ManagedKeys;
import dev.ratelimit.gateway.mock.MockModel;
import dev.ratelimit.gateway.store.GatewayStore;
import dev.ratelimit.gateway.web.AccessLog;
import dev.ratelimit.gateway.web.Gateway;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * The gateway server: OpenAI's, Anthropic's and Google's Gemini APIs on embedded Jetty 12. It authenticates API
 * keys; keeps every tenant, team and organisation within its request, token and dollar budgets,
 * every model within its upstream cap and every tenant within its concurrency cap; and forwards by
 * model to the configured upstreams (OpenAI-, Anthropic- or Gemini-protocol), or to a built-in mock
 * model that speaks all three when none is configured.
 *
 * <p>Environment: {@code HOST} (the address to listen on; default the configuration's {@code
 * server.host}, else 127.0.0.1; {@code 0.0.0.0} listens on every interface), {@code PORT} (default
 * the configuration's {@code server.port}, else 8080; 0 picks a free port), {@code GATEWAY_CONFIG} (a YAML
 * configuration file; the built-in default otherwise), {@code UPSTREAM_URL} and {@code
 * UPSTREAM_API_KEY} (the upstream's base URL, such as {@code https://api.openai.com/v1}, and the key
 * the gateway sends it; with {@code UPSTREAM_PROTOCOL} and {@code UPSTREAM_HTTP_VERSION}), {@code REDIS_URL} (budgets and slots in Redis through Lettuce instead of
 * this process's memory), {@code REDIS_CLUSTER_URL} (the same in a Redis Cluster, named by one or
 * more of its nodes, comma-separated; not with {@code REDIS_URL}), {@code RATE_LIMIT_DISABLED=true}
 * (the kill switch), {@code
 * MANAGEMENT_HOST} and {@code MANAGEMENT_PORT} (the management listener, which alone serves the
 * status page {@code GET /}, {@code /status.json}, {@code /metrics} and the admin API {@code /admin/*}; default the configuration's
 * {@code management.host}/{@code management.port}, else 127.0.0.1:8081), {@code ACCESS_LOG}
 * ({@code stdout}, {@code off} or a file: one JSON line per API request; default the
 * configuration's {@code server.access-log}, else {@code stdout}).
 */
public final class GatewayServer {

    private static final System.Logger LOG = System.getLogger(GatewayServer.class.getName());

    static final String DEFAULT_HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 8080;
    static final int DEFAULT_MANAGEMENT_PORT = 8081;

    private final Server server;
    private final String host;
    private final int port;
    private final String managementHost;
    private final int managementPort;
    private final GatewayStore store;
    private final Gateway gateway;
    private final @Nullable MockModel mock;
    private final boolean limiterDisabled;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final @Nullable ConfigReloader reloader;
    private final AccessLog accessLog;
    private final JvmGcMetrics gcMetrics;
    private final QueuedThreadPool threads;
    private final ManagedKeys managedKeys;

    /** How long the relays get to settle after the upstream exchanges are aborted at the deadline. */
    private static final Duration ABORT_GRACE = Duration.ofSeconds(5);

    GatewayServer(
            Server server,
            String host,
            int port,
            String managementHost,
            int managementPort,
            GatewayStore store,
            Gateway gateway,
            @Nullable MockModel mock,
            boolean limiterDisabled,
            @Nullable ConfigReloader reloader,
            AccessLog accessLog,
            JvmGcMetrics gcMetrics,
            QueuedThreadPool threads,
            ManagedKeys managedKeys) {
        this.server = server;
        this.host = host;
        this.port = port;
        this.managementHost = managementHost;
        this.managementPort = managementPort;
        this.store = store;
        this.gateway = gateway;
        this.mock = mock;
        this.limiterDisabled = limiterDisabled;
        this.reloader = reloader;
        this.accessLog = accessLog;
        this.gcMetrics = gcMetrics;
        this.threads = threads;
        this.managedKeys = managedKeys;
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
        // SIGTERM (service managers, Kubernetes) and SIGINT (Ctrl-C) drain the gateway, then exit 0; the hook
        // covers any other way the JVM ends
        Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "gateway-shutdown"));
        for (String name : List.of("TERM", "INT")) {
            Signal.handle(new Signal(name), signal -> {
                Thread drain = new Thread(
                        () -> {
                            gateway.close();
                            System.exit(0);
                        },
                        "gateway-sig" + name);
                drain.start();
            });
        }
        ConfigReloader reloader = gateway.reloader;
        if (reloader != null) {
            SignalHandler before = Signal.handle(new Signal("HUP"), signal -> reloader.reload("SIGHUP"));
            if (before == SignalHandler.SIG_IGN) {
                // started with SIGHUP ignored (nohup): the JVM keeps it ignored
                LOG.log(
                        System.Logger.Level.WARNING,
                        "SIGHUP is ignored in this process (started under nohup?), so it cannot reload the"
                                + " configuration; the file watch still does (server.watch-config)");
            }
        }
        gateway.printBanner(System.out);
        gateway.server.join();
    }

    /**
     * Starts a gateway: {@link Assembly} builds it.
     *
     * @param environment the variables described in the class documentation
     * @param clock the limiter's time, for tests; {@code null} takes the store's (Redis {@code TIME})
     */
    static GatewayServer start(Map<String, String> environment, @Nullable Clock clock) throws Exception {
        return Assembly.start(environment, clock);
    }

    int port() {
        return port;
    }

    int managementPort() {
        return managementPort;
    }

    /** Where a client on this machine reaches the gateway: loopback when it listens on every interface. */
    String baseUrl() {
        return "http://" + urlHost(wildcard(host) ? DEFAULT_HOST : host) + ":" + port;
    }

    /** Where an operator on this machine reaches the status page and the metrics. */
    String managementUrl() {
        return "http://" + urlHost(wildcard(managementHost) ? DEFAULT_HOST : managementHost) + ":" + managementPort;
    }

    private static boolean wildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    private static String urlHost(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    /** Where the budgets are kept, for tests that read them with a limiter of their own. */
    WindowStore windowStore() {
        return store.store();
    }

    Gateway gateway() {
        return gateway;
    }

    /** The one pool of threads of the listeners and the upstream client, for tests that count them. */
    QueuedThreadPool threadPool() {
        return threads;
    }

    /** Whether the configuration is the built-in one, whose demo keys the banner may name. */
    private boolean demoKeys() {
        return gateway.config().source().startsWith("built-in ");
    }

    String curlLine() {
        return "curl " + baseUrl() + "/v1/chat/completions -H 'Authorization: Bearer "
                + (demoKeys() ? "demo-free" : "<your key>") + "'"
                + " -H 'Content-Type: application/json'"
                + " -d '{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'";
    }

    void printBanner(PrintStream out) {
        out.println("ratelimit gateway listening on http://" + urlHost(host) + ":" + port
                + (wildcard(host) ? " (every interface)" : ""));
        out.println("management: http://" + urlHost(managementHost) + ":" + managementPort
                + (wildcard(managementHost) ? " (every interface)" : "")
                + " (status page, /status.json, /metrics; never on the API listener)");
        out.println("upstream: " + gateway.upstream().description());
        out.println("store:    " + store.description());
        int admins = gateway.config().admin().keys().size();
        out.println("admin:    "
                + (admins == 0
                        ? "no admin key (admin.keys): the admin API answers 401"
                        : managementUrl() + "/admin/keys, " + admins + " admin key" + (admins == 1 ? "" : "s"))
                + "; managed keys " + managedKeys.description());
        out.println("config:   " + gateway.config().source() + " (" + describe(gateway.config())
                + (limiterDisabled ? "; limiter DISABLED by the kill switch" : "") + ")");
        out.println("tenants:  "
                + gateway.config().tenants().entrySet().stream()
                        .map(entry -> entry.getKey() + " (" + entry.getValue().name() + ")")
                        .collect(Collectors.joining(", ")));
        out.println("caps:     " + caps(gateway.config()));
        out.println("try:      " + curlLine());
        if (demoKeys()) {
            out.println("          (OpenAI clients: base URL " + baseUrl() + "/v1, API key demo-free, demo-pro or"
                    + " demo-enterprise; the 6th demo-free call within a minute gets 429)");
        } else {
            out.println("          (OpenAI clients: base URL " + baseUrl() + "/v1 and one of the configured keys)");
        }
        out.println("see:      " + managementUrl() + "/ (status), " + managementUrl() + "/metrics (Prometheus), "
                + baseUrl() + "/health");
        out.flush();
    }

    /** The upstream caps per model, and what a model not listed is charged to. */
    static String caps(GatewayConfig config) {
        String listed = config.models().values().stream()
                .filter(cap -> !cap.model().equals(GatewayConfig.ANY_MODEL))
                .map(cap -> cap.model() + " " + rates(cap))
                .collect(Collectors.joining(", "));
        GatewayConfig.ModelCap any = config.models().get(GatewayConfig.ANY_MODEL);
        String others = any == null
                ? "every other model: no upstream cap"
                : "every other model: " + rates(any) + " shared (\"*\")";
        return listed.isEmpty() ? others : listed + "; " + others;
    }

    private static String rates(GatewayConfig.ModelCap cap) {
        List<String> rates = new ArrayList<>();
        if (cap.rpm() > 0) {
            rates.add(cap.rpm() + " rpm");
        }
        if (cap.tpm() > 0) {
            rates.add(cap.tpm() + " tpm");
        }
        return String.join(" ", rates);
    }

    private static String describe(GatewayConfig config) {
        return config.tiers().values().stream()
                .map(tier -> tier.name() + ": "
                        + tier.tier().windows().stream()
                                .map(w -> w.limit() + (w.isTokens() ? " tokens" : "") + "/"
                                        + (w.isCalendar()
                                                ? w.calendar()
                                                : Window.of(1, w.length()).name())
                                        + (w.inShadow() ? " shadow" : ""))
                                .collect(Collectors.joining(" "))
                        + ", " + tier.maxConcurrent() + " concurrent")
                .collect(Collectors.joining("; "));
    }

    /**
     * Shuts down: stops accepting connections and refuses new metered requests (readiness turns 503),
     * lets requests in flight finish up to {@code server.shutdown-timeout-seconds}, then aborts the
     * upstream exchanges still running (each relay settles what it relayed), cancels whatever is still
     * unsettled (each settlement or cancellation frees its slot in the same store call; one Redis
     * missed passes when its lease ends), stops the server, stops renewing the slots and closes the
     * store. A second call does nothing.
     */
    void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        if (reloader != null) {
            reloader.close();
        }
        Admission admission = gateway.admission();
        gateway.draining().set(true);
        Duration timeout = gateway.config().server().shutdownTimeout();
        System.out.println("ratelimit gateway: shutting down; " + admission.open()
                + " metered requests in flight get up to " + timeout.toSeconds() + " s to finish");
        System.out.flush();
        for (Connector connector : server.getConnectors()) {
            if (connector instanceof AbstractConnector graceful) {
                graceful.shutdown(); // no new connections; open ones finish what they are doing
            }
        }
        boolean finished = awaitSettled(admission, timeout);
        int cancelled = 0;
        if (!finished) {
            gateway.upstream().close(); // the relays still running end now and settle what they relayed
            awaitSettled(admission, ABORT_GRACE);
            cancelled = admission.cancelOpen("shutdown");
        }
        // settlements the store did not take at once are queued in the limiter: they reach it before it closes
        boolean drained = admission.awaitSettlements(timeout);
        System.out.println("ratelimit gateway: " + (finished ? "every request in flight finished" : "deadline passed")
                + "; " + cancelled + " admissions cancelled, every slot freed; "
                + (drained
                        ? "every settlement reached the store"
                        : "settlements still queued after " + timeout.toSeconds() + " s are given up (their estimates"
                                + " stay until their windows pass)"));
        System.out.flush();
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
            managedKeys.close();
            store.close();
            accessLog.close();
            gcMetrics.close();
            try {
                threads.stop();
            } catch (Exception e) {
                // shutting down anyway
            }
        }
    }

    private static boolean awaitSettled(Admission admission, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (admission.open() > 0) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
