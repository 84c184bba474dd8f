package dev.ratelimit.gateway;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.gateway.admin.AdminServlet;
import dev.ratelimit.gateway.admin.HealthCheck;
import dev.ratelimit.gateway.admin.InfoServlets;
import dev.ratelimit.gateway.admin.StatusReport;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.admission.BudgetAlerts;
import dev.ratelimit.gateway.admission.LocalSlots;
import dev.ratelimit.gateway.admission.RedisSlots;
import dev.ratelimit.gateway.admission.ShadowRefusals;
import dev.ratelimit.gateway.admission.Slots;
import dev.ratelimit.gateway.batch.AnthropicBatchServlet;
import dev.ratelimit.gateway.batch.BatchOwners;
import dev.ratelimit.gateway.batch.BatchServlet;
import dev.ratelimit.gateway.batch.Batches;
import dev.ratelimit.gateway.config.ConfigReloader;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.ManagedKeys;
import dev.ratelimit.gateway.config.UpstreamConfig;
import dev.ratelimit.gateway.metrics.GatewayMetrics;
import dev.ratelimit.gateway.mock.MockModel;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicEndpoint;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.gemini.GeminiEndpoint;
import dev.ratelimit.gateway.protocol.gemini.GeminiTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAiEndpoint;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.gateway.store.GatewayStore;
import dev.ratelimit.gateway.store.RedisTarget;
import dev.ratelimit.gateway.upstream.Cooldowns;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.gateway.web.AccessLog;
import dev.ratelimit.gateway.web.ApiKeyFilter;
import dev.ratelimit.gateway.web.ConnectionLimit;
import dev.ratelimit.gateway.web.Gateway;
import dev.ratelimit.gateway.web.GeminiServlet;
import dev.ratelimit.gateway.web.JsonErrors;
import dev.ratelimit.gateway.web.MeteredServlet;
import dev.ratelimit.gateway.web.PassthroughServlet;
import dev.ratelimit.http.ErrorShape;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import java.io.IOException;
import java.io.PrintStream;
import java.net.BindException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.FilterMapping;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.AbstractConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
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

    private GatewayServer(
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
     * Starts a gateway.
     *
     * @param environment the variables described in the class documentation
     * @param clock the limiter's time, for tests; {@code null} takes the store's (Redis {@code TIME})
     */
    static GatewayServer start(Map<String, String> environment, @Nullable Clock clock) throws Exception {
        GatewayConfig config = GatewayConfig.load(environment.get("GATEWAY_CONFIG"), environment);
        String host = host(environment.get("HOST"), config.server().host());
        int port = port("PORT", environment.get("PORT"), config.server().port(), DEFAULT_PORT);
        String managementHost =
                host(environment.get("MANAGEMENT_HOST"), config.server().managementHost());
        int managementPort = port(
                "MANAGEMENT_PORT",
                environment.get("MANAGEMENT_PORT"),
                config.server().managementPort(),
                DEFAULT_MANAGEMENT_PORT);
        if (managementPort == port && port != 0) {
            throw new IllegalArgumentException("MANAGEMENT_PORT (management.port) must differ from PORT (server.port),"
                    + " both were " + port + ": the status page and metrics have a listener of their own");
        }
        upstreamUrl(environment.get("UPSTREAM_URL")); // checked before anything starts
        List<AutoCloseable> opened = new ArrayList<>();
        // one pool for both listeners, the upstream client and what follows a store's answer: no
        // request holds a thread while it waits for a client, an upstream or the store, so its size
        // bounds the work done at once, not the requests in flight
        QueuedThreadPool threads = new QueuedThreadPool(config.server().maxThreads());
        threads.setName("gateway");
        threads.start();
        GatewayStore store;
        try {
            store = GatewayStore.select(
                    environment.get("REDIS_URL"),
                    environment.get("REDIS_CLUSTER_URL"),
                    config.limits().storeTimeout(),
                    threads);
        } catch (RuntimeException e) {
            threads.stop();
            throw e;
        }
        opened.add(store);
        opened.add(threads::stop); // after the store
        try {
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            // what operators expect of a Micrometer application's /metrics: memory, GC, threads, classes, CPU, uptime
            new JvmMemoryMetrics().bindTo(registry);
            JvmGcMetrics gc = new JvmGcMetrics();
            gc.bindTo(registry);
            opened.add(gc);
            new JvmThreadMetrics().bindTo(registry);
            new ClassLoaderMetrics().bindTo(registry);
            new ProcessorMetrics().bindTo(registry);
            new UptimeMetrics().bindTo(registry);
            boolean disabled = SlidingWindowRateLimiter.disabledBy(environment);
            SlidingWindowRateLimiter.Builder limiterBuilder = SlidingWindowRateLimiter.builder(store.store())
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .name("gateway")
                    .disabled(disabled)
                    .failOpen(config.limits().failOpen())
                    .expectedInstances(config.limits().expectedInstances())
                    .circuitBreaker(breaker(config.limits().breaker()));
            if (clock != null) {
                limiterBuilder.clock(clock);
            }
            RateLimiter limiter = limiterBuilder.build();
            if (!disabled) {
                // before listening: a cold JVM's first burst on a busy machine must not time out on the store
                SlidingWindowRateLimiter.Builder warm = SlidingWindowRateLimiter.builder(store.store())
                        .name("gateway-warm-up")
                        .disabled(false)
                        .circuitBreaker(NEVER_OPENS);
                if (clock != null) {
                    warm.clock(clock); // the reads see the windows at the decisions' time
                }
                String warmed = Warmup.run(warm.build(), config, config.limits().storeTimeout());
                LOG.log(System.Logger.Level.INFO, "store path warmed up: " + warmed);
            }
            GatewayMetrics metrics = new GatewayMetrics(registry);
            RedisTarget redis = store.redis();
            Slots slots = disabled
                    ? Slots.unlimited()
                    : redis != null
                            ? new RedisSlots(
                                    redis,
                                    config.limits().slotLease(),
                                    config.limits().failOpen(),
                                    registry)
                            : new LocalSlots();
            opened.add(0, slots);
            TokenCounter tokens = new TokenCounter();

            MockModel mock = null;
            Clock wallClock = clock != null ? clock : Clock.systemUTC();
            String shorthand = environment.get("UPSTREAM_URL");
            if (config.upstreams().isEmpty() && (shorthand == null || shorthand.isBlank())) {
                List<String> listed = config.models().keySet().stream()
                        .filter(model -> !model.equals(GatewayConfig.ANY_MODEL))
                        .toList();
                mock = MockModel.start(tokens, listed, wallClock);
                opened.add(0, mock);
            }
            List<UpstreamConfig> upstreamConfigs =
                    Upstream.configured(config, environment, mock == null ? null : mock.baseUrl());
            Cooldowns cooldowns = new Cooldowns(
                    wallClock,
                    redis,
                    registry,
                    upstreamConfigs.stream().map(UpstreamConfig::name).toList());
            opened.add(0, cooldowns);
            AtomicReference<GatewayConfig> configs = new AtomicReference<>(config);
            BudgetAlerts alerts = new BudgetAlerts(
                    () -> Objects.requireNonNull(configs.get()).alerts(), wallClock, cooldowns::claim, registry);
            opened.add(0, alerts);
            ManagedKeys managedKeys =
                    new ManagedKeys(wallClock, redis, config.admin().prefix());
            opened.add(0, managedKeys);
            String conflict = managedKeys.conflict(config);
            if (conflict != null) {
                throw new IllegalArgumentException(config.source() + ": " + conflict);
            }
            Upstream upstream = new Upstream(
                    upstreamConfigs,
                    config.limits(),
                    cooldowns,
                    threads,
                    config.server().maxConnections());
            opened.add(0, upstream);
            AtomicBoolean draining = new AtomicBoolean();
            Gateway gateway = new Gateway(
                    configs,
                    tokens,
                    new Admission(limiter, slots, metrics, alerts, threads),
                    Gateway.meteredResponses(UpstreamConfig.Protocol.OPENAI, wallClock),
                    Gateway.meteredResponses(UpstreamConfig.Protocol.ANTHROPIC, wallClock),
                    Gateway.meteredResponses(UpstreamConfig.Protocol.GEMINI, wallClock),
                    metrics,
                    upstream,
                    slots,
                    store.description(),
                    draining,
                    new ShadowRefusals());
            StatusReport status = new StatusReport(
                    limiter,
                    gateway::config,
                    slots,
                    config.limits().failOpen(),
                    Map.of(
                            "store",
                            store.description(),
                            "slots",
                            slots.description(),
                            "upstream",
                            upstream.description(),
                            "limiter",
                            disabled ? "DISABLED (kill switch): every request passes" : "enabled"),
                    cooldowns,
                    gateway.shadowRefusals());

            Server server = new Server(threads);
            server.setErrorHandler(new JsonErrors()); // 431, 414, 400 and the like in OpenAI's shape
            int selectors = Math.max(
                    1,
                    Math.min(
                            Math.min(4, Runtime.getRuntime().availableProcessors() / 2),
                            (config.server().maxThreads() - GatewayConfig.ServerSettings.MIN_THREADS) / 2));
            ServerConnector connector = connector(server, API, host, port, selectors, config);
            // an API client silent this long is gone (AsyncClient: not while the gateway waits for the upstream)
            connector.setIdleTimeout(config.server().clientIdleTimeout().toMillis());
            ConnectionLimit connections = new ConnectionLimit(config.server().maxConnections(), metrics);
            connector.addEventListener(connections);
            ServerConnector management = connector(server, MANAGEMENT, managementHost, managementPort, 1, config);
            String accessTarget = environment.get("ACCESS_LOG");
            AccessLog accessLog = AccessLog.open(
                    accessTarget != null && !accessTarget.isBlank()
                            ? accessTarget
                            : config.server().accessLog(),
                    Clock.systemUTC());
            opened.add(0, accessLog);
            ServletContextHandler context = new ServletContextHandler();
            context.setContextPath("/");
            context.setVirtualHosts(List.of("@" + API));
            // first: a line for every request on the API listener, refused ones included
            context.addFilter(
                    new FilterHolder(accessLog),
                    "/*",
                    EnumSet.of(DispatcherType.REQUEST)); // only the API listener's requests reach it
            context.setErrorHandler(new JsonErrors());
            // before the key is checked: a connection beyond server.max-connections is refused whoever it is
            FilterHolder connectionLimit = new FilterHolder(connections);
            context.addFilter(connectionLimit, "/v1/*", EnumSet.of(DispatcherType.REQUEST));
            context.addFilter(connectionLimit, Gemini.PREFIX + "/*", EnumSet.of(DispatcherType.REQUEST));
            FilterHolder apiKeys = new FilterHolder(new ApiKeyFilter(gateway::config, metrics, managedKeys));
            context.addFilter(apiKeys, "/v1/*", EnumSet.of(DispatcherType.REQUEST));
            context.addFilter(apiKeys, Gemini.PREFIX + "/*", EnumSet.of(DispatcherType.REQUEST));
            for (OpenAiEndpoint endpoint : OpenAiEndpoint.values()) {
                context.addServlet(
                        new ServletHolder(new MeteredServlet(endpoint, gateway)), "/v1" + endpoint.upstreamPath());
            }
            BatchOwners batchOwners = new BatchOwners(redis, config.admin().prefix());
            Batches batchCore = new Batches(gateway, batchOwners);
            opened.add(0, batchCore); // closed with the servlets that use it once started
            ServletHolder batches = new ServletHolder(new BatchServlet(batchCore));
            for (String batchPath : List.of("/v1/files", "/v1/files/*", "/v1/batches", "/v1/batches/*")) {
                context.addServlet(batches, batchPath);
            }
            AnthropicTokens anthropicTokens = new AnthropicTokens();
            AnthropicEndpoint anthropic = new AnthropicEndpoint(anthropicTokens);
            ServletHolder messages = new ServletHolder(new MeteredServlet(anthropic, gateway));
            context.addServlet(messages, Anthropic.MESSAGES);
            context.addServlet(messages, Anthropic.COUNT_TOKENS);
            ServletHolder messageBatches =
                    new ServletHolder(new AnthropicBatchServlet(batchCore, anthropic, anthropicTokens));
            context.addServlet(messageBatches, AnthropicBatchServlet.PATH);
            context.addServlet(messageBatches, AnthropicBatchServlet.PATH + "/*");
            GeminiServlet geminiServlet = new GeminiServlet(gateway, new GeminiEndpoint(new GeminiTokens()));
            ServletHolder gemini = new ServletHolder(GEMINI, geminiServlet);
            context.addServlet(gemini, Gemini.PREFIX + "/*");
            context.addServlet(gemini, "/upload" + Gemini.PREFIX + "/*"); // the SDK's uploads: Google's 404
            ServletHolder passthrough = new ServletHolder(PassthroughServlet.NAME, new PassthroughServlet(gateway));
            context.addServlet(passthrough, "/v1/*");
            // after ApiKeyFilter (mapped by path, so it runs first): the body, then the library's filter
            filterServlet(context, new PassthroughServlet.BodyFirst(gateway, geminiServlet), "body-first");
            AtomicReference<Filter> passthroughLimit =
                    new AtomicReference<>(PassthroughServlet.rateLimitFilter(limiter, config));
            filterServlet(
                    context,
                    (request, response, chain) -> Objects.requireNonNull(passthroughLimit.get(), "passthroughLimit")
                            .doFilter(request, response, chain),
                    "rate-limit");
            // Gemini's model list: the same request windows, refused in Google's shape
            AtomicReference<Filter> geminiLimit =
                    new AtomicReference<>(PassthroughServlet.rateLimitFilter(limiter, config, ErrorShape.GEMINI));
            filterServlet(context, new GeminiServlet.Listing(gateway, geminiLimit::get), "gemini-listing", GEMINI);
            HealthCheck health = new HealthCheck(
                    limiter,
                    gateway::config,
                    slots,
                    store::nodesProblem,
                    store.kind(),
                    disabled ? "none" : store.kind(),
                    disabled,
                    config.limits().failOpen(),
                    draining::get);
            // the store was connected and the script loaded when the store was built; one check now
            // records that it answered, so a gateway whose store answers is ready from its first probe
            health.checkAtStart();
            // probes reach health without a secret on either listener; the admin surfaces only on management
            context.addServlet(new ServletHolder(new InfoServlets.Health(health)), "/health/*");
            context.addServlet(new ServletHolder(new InfoServlets.NotFound()), "/");
            ServletContextHandler admin = new ServletContextHandler();
            admin.setContextPath("/");
            admin.setVirtualHosts(List.of("@" + MANAGEMENT));
            admin.setErrorHandler(new JsonErrors());
            admin.addServlet(new ServletHolder(new InfoServlets.Health(health)), "/health/*");
            admin.addServlet(new ServletHolder(new InfoServlets.Metrics(registry)), "/metrics");
            admin.addServlet(new ServletHolder(new InfoServlets.StatusJson(status)), "/status.json");
            admin.addServlet(new ServletHolder(new AdminServlet(gateway::config, managedKeys)), "/admin/*");
            admin.addServlet(new ServletHolder(new InfoServlets.StatusPage()), "/");
            // the metered and pass-through servlets answer asynchronously: every filter before them allows it
            for (FilterHolder filter : context.getServletHandler().getFilters()) {
                filter.setAsyncSupported(true);
            }
            for (ServletHolder servlet : context.getServletHandler().getServlets()) {
                servlet.setAsyncSupported(true);
            }
            server.setHandler(new ContextHandlerCollection(context, admin));
            try {
                server.start();
            } catch (IOException e) {
                server.stop();
                if (e instanceof BindException || e.getCause() instanceof BindException) {
                    throw new IOException(
                            "port " + port + " on " + host + " or management port " + managementPort + " on "
                                    + managementHost + " is in use or not an address of this machine; set PORT or"
                                    + " MANAGEMENT_PORT to another port (0 picks a free one) or HOST or"
                                    + " MANAGEMENT_HOST to another address",
                            e);
                }
                throw e;
            }
            for (String warning : config.warnings()) {
                LOG.log(System.Logger.Level.WARNING, warning);
            }
            String file = environment.get("GATEWAY_CONFIG");
            ConfigReloader reloader = null;
            if (file != null && !file.isBlank()) {
                reloader = new ConfigReloader(
                        Path.of(file.trim()),
                        environment,
                        configs,
                        next -> {
                            passthroughLimit.set(PassthroughServlet.rateLimitFilter(limiter, next));
                            geminiLimit.set(PassthroughServlet.rateLimitFilter(limiter, next, ErrorShape.GEMINI));
                        },
                        managedKeys::conflict,
                        registry);
                if (config.server().watchConfig()) {
                    reloader.watch();
                }
            }
            GatewayServer started = new GatewayServer(
                    server,
                    host,
                    connector.getLocalPort(),
                    managementHost,
                    management.getLocalPort(),
                    store,
                    gateway,
                    mock,
                    disabled,
                    reloader,
                    accessLog,
                    gc,
                    threads,
                    managedKeys);
            opened.clear();
            return started;
        } finally {
            for (AutoCloseable resource : opened) {
                resource.close();
            }
        }
    }

    /** The breaker of {@code limits.breaker.*}, shaped as the library's default one (count-based). */
    private static CircuitBreakerConfig breaker(GatewayConfig.Breaker breaker) {
        return CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(breaker.slidingWindowSize())
                .minimumNumberOfCalls(breaker.minimumNumberOfCalls())
                .failureRateThreshold(breaker.failureRateThreshold())
                .slowCallDurationThreshold(breaker.slowCallDuration())
                .slowCallRateThreshold(breaker.slowCallRateThreshold())
                .waitDurationInOpenState(breaker.waitInOpenState())
                .permittedNumberOfCallsInHalfOpenState(breaker.permittedCallsInHalfOpen())
                .recordExceptions(RuntimeException.class)
                .build();
    }

    /** The warm-up limiter's breaker: a slow or failed read opens nothing, counts nowhere. */
    private static final CircuitBreakerConfig NEVER_OPENS = CircuitBreakerConfig.custom()
            .recordException(e -> false)
            .slowCallRateThreshold(100)
            .slowCallDurationThreshold(Duration.ofDays(1))
            .build();

    /** The listeners' accept queue: connections the kernel holds before the gateway accepts them. */
    static final int ACCEPT_QUEUE = 4_096;

    private static final String API = "api";
    /** The Gemini API's servlet, which its listing filter is mapped to. */
    private static final String GEMINI = "gemini";

    private static final String MANAGEMENT = "management";

    /**
     * A named listener: the contexts choose their listener by its name. One acceptor and {@code
     * selectors} selector threads, taken from the pool.
     */
    private static ServerConnector connector(
            Server server, String name, String host, int port, int selectors, GatewayConfig config) {
        ServerConnector connector = new ServerConnector(server, 1, selectors);
        connector.setName(name);
        connector.setHost(host);
        connector.setPort(port);
        // a shutdown must not close a stream that waits for the upstream's next chunk before its deadline
        connector.setShutdownIdleTimeout(config.server().shutdownTimeout().toMillis());
        // a burst of new connections waits in the kernel's queue rather than being dropped (the JDK's
        // default is 50; the kernel caps it at net.core.somaxconn)
        connector.setAcceptQueueSize(ACCEPT_QUEUE);
        server.addConnector(connector);
        return connector;
    }

    /** Maps a filter to the pass-through servlet by its name, after the filters mapped so far. */
    private static void filterServlet(ServletContextHandler context, Filter filter, String name) {
        filterServlet(context, filter, name, PassthroughServlet.NAME);
    }

    /** Maps a filter to the servlet named {@code servlet}, after the filters mapped so far. */
    private static void filterServlet(ServletContextHandler context, Filter filter, String name, String servlet) {
        FilterHolder holder = new FilterHolder(filter);
        holder.setName(name);
        FilterMapping mapping = new FilterMapping();
        mapping.setFilterName(name);
        mapping.setServletName(servlet);
        mapping.setDispatcherTypes(EnumSet.of(DispatcherType.REQUEST));
        context.getServletHandler().addFilter(holder, mapping);
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

    /** {@code HOST} wins over the file's {@code server.host}, as {@code PORT} over {@code server.port}. */
    private static String host(@Nullable String variable, @Nullable String configured) {
        if (variable != null && !variable.isBlank()) {
            return variable.trim();
        }
        return configured != null ? configured : DEFAULT_HOST;
    }

    private static int port(String variable, @Nullable String value, @Nullable Integer configured, int otherwise) {
        if (value == null || value.isBlank()) {
            return configured != null ? configured : otherwise;
        }
        try {
            int port = Integer.parseInt(value.trim());
            if (port < 0 || port > 65_535) {
                throw new NumberFormatException();
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(variable + " must be a number from 0 to 65535, was '" + value + "'", e);
        }
    }
}
