package dev.ratelimit.gateway;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
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
import dev.ratelimit.gateway.store.GatewayKeys;
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
import java.net.BindException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.FilterMapping;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandlerCollection;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's composition root: builds every part of a gateway from its environment, in the order
 * each needs the others, one step per layer (settings, threads and store, meters and limiter,
 * admission, upstream, the shared pipeline, the HTTP listeners, the configuration's reload), and
 * hands them to the {@link GatewayServer} that runs and closes them. Nothing else constructs a
 * gateway's parts. When a step fails, what the steps before it opened is closed, newest first.
 */
final class Assembly {

    private static final System.Logger LOG = System.getLogger(Assembly.class.getName());

    /** The listeners' accept queue: connections the kernel holds before the gateway accepts them. */
    static final int ACCEPT_QUEUE = 4_096;

    private static final String API = "api";
    /** The Gemini API's servlet, which its listing filter is mapped to. */
    private static final String GEMINI = "gemini";

    private static final String MANAGEMENT = "management";

    /** The warm-up limiter's breaker: a slow or failed read opens nothing, counts nowhere. */
    private static final CircuitBreakerConfig NEVER_OPENS = CircuitBreakerConfig.custom()
            .recordException(e -> false)
            .slowCallRateThreshold(100)
            .slowCallDurationThreshold(Duration.ofDays(1))
            .build();

    private final Map<String, String> environment;
    private final @Nullable Clock clock;
    private final Clock wallClock;
    /** What the steps opened, newest first: closed in that order when a later step fails. */
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    // settings
    private GatewayConfig config;
    private String host;
    private int port;
    private String managementHost;
    private int managementPort;
    // threads, store, meters, limiter
    private QueuedThreadPool threads;
    private GatewayStore store;
    private PrometheusMeterRegistry registry;
    private JvmGcMetrics gc;
    private boolean disabled;
    private RateLimiter limiter;
    // admission and upstream
    private GatewayMetrics metrics;
    private Slots slots;
    private TokenCounter tokens;
    private @Nullable MockModel mock;
    private Cooldowns cooldowns;
    private Upstream upstream;
    private ManagedKeys managedKeys;
    private AtomicReference<GatewayConfig> configs;
    private Gateway gateway;
    /** The names of the gateway's own keys on Redis, under {@code admin.prefix}. */
    private GatewayKeys keys;

    private @Nullable ConnectionLimit connections;

    @SuppressWarnings("NullAway.Init") // the parts are set by the steps of build(), in order, before any is used
    private Assembly(Map<String, String> environment, @Nullable Clock clock) {
        this.environment = environment;
        this.clock = clock;
        this.wallClock = clock != null ? clock : Clock.systemUTC();
    }

    /**
     * Builds and starts a gateway.
     *
     * @param environment the variables {@link GatewayServer} documents
     * @param clock the limiter's time, for tests; {@code null} takes the store's (Redis {@code TIME})
     */
    static GatewayServer start(Map<String, String> environment, @Nullable Clock clock) throws Exception {
        Assembly assembly = new Assembly(environment, clock);
        try {
            return assembly.build();
        } catch (Exception | Error e) {
            assembly.closeOpened(e);
            throw e;
        }
    }

    private GatewayServer build() throws Exception {
        settings();
        threadsAndStore();
        metersAndLimiter();
        admissionAndUpstream();
        pipeline();
        Server server = new Server(threads);
        server.setErrorHandler(new JsonErrors()); // 431, 414, 400 and the like in OpenAI's shape
        ServerConnector api = apiConnector(server);
        ServerConnector management = connector(server, MANAGEMENT, managementHost, managementPort, 1, config);
        AccessLog accessLog = accessLog();
        Listeners listeners = listeners(accessLog);
        server.setHandler(new ContextHandlerCollection(listeners.api(), listeners.management()));
        listen(server);
        for (String warning : config.warnings()) {
            LOG.log(System.Logger.Level.WARNING, warning);
        }
        ConfigReloader reloader = reloader(listeners);
        GatewayServer started = new GatewayServer(
                server,
                host,
                api.getLocalPort(),
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
        opened.clear(); // the server closes them from now on
        return started;
    }

    /** The configuration file and the listeners' addresses, checked before anything starts. */
    private void settings() throws IOException {
        config = GatewayConfig.load(environment.get("GATEWAY_CONFIG"), environment);
        host = host(environment.get("HOST"), config.server().host());
        port = port("PORT", environment.get("PORT"), config.server().port(), GatewayServer.DEFAULT_PORT);
        managementHost =
                host(environment.get("MANAGEMENT_HOST"), config.server().managementHost());
        managementPort = port(
                "MANAGEMENT_PORT",
                environment.get("MANAGEMENT_PORT"),
                config.server().managementPort(),
                GatewayServer.DEFAULT_MANAGEMENT_PORT);
        if (managementPort == port && port != 0) {
            throw new IllegalArgumentException("MANAGEMENT_PORT (management.port) must differ from PORT (server.port),"
                    + " both were " + port + ": the status page and metrics have a listener of their own");
        }
        upstreamUrl(environment.get("UPSTREAM_URL")); // checked before anything starts
    }

    /**
     * One pool for both listeners, the upstream client and what follows a store's answer (no request
     * holds a thread while it waits for a client, an upstream or the store, so its size bounds the
     * work done at once, not the requests in flight); then the store, which hands its answers to it.
     */
    private void threadsAndStore() throws Exception {
        threads = new QueuedThreadPool(config.server().maxThreads());
        threads.setName("gateway");
        threads.start();
        opened.push(threads::stop);
        store = GatewayStore.select(
                environment.get("REDIS_URL"),
                environment.get("REDIS_CLUSTER_URL"),
                config.limits().storeTimeout(),
                threads);
        opened.push(store); // closed before the pool
    }

    /** The meter registry with the JVM's meters, and the limiter, warmed up before any listener opens. */
    private void metersAndLimiter() throws InterruptedException {
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // what operators expect of a Micrometer application's /metrics: memory, GC, threads, classes, CPU, uptime
        new JvmMemoryMetrics().bindTo(registry);
        gc = new JvmGcMetrics();
        gc.bindTo(registry);
        opened.push(gc);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        disabled = SlidingWindowRateLimiter.disabledBy(environment);
        SlidingWindowRateLimiter.Builder builder = SlidingWindowRateLimiter.builder(store.store())
                .metrics(MicrometerLimiterMetrics.of(registry))
                .name("gateway")
                .disabled(disabled)
                .failOpen(config.limits().failOpen())
                .expectedInstances(config.limits().expectedInstances())
                .circuitBreaker(breaker(config.limits().breaker()));
        if (clock != null) {
            builder.clock(clock);
        }
        limiter = builder.build();
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
    }

    /**
     * The concurrency slots, the mock model when no upstream is configured, the upstreams with their
     * cooldowns, and the keys the admin API manages.
     */
    private void admissionAndUpstream() throws Exception {
        metrics = new GatewayMetrics(registry);
        RedisTarget redis = store.redis();
        slots = disabled
                ? Slots.unlimited()
                : redis != null
                        ? new RedisSlots(
                                redis,
                                config.limits().slotLease(),
                                config.limits().failOpen(),
                                registry)
                        : new LocalSlots();
        opened.push(slots);
        tokens = new TokenCounter();
        String shorthand = environment.get("UPSTREAM_URL");
        if (config.upstreams().isEmpty() && (shorthand == null || shorthand.isBlank())) {
            List<String> listed = config.models().keySet().stream()
                    .filter(model -> !model.equals(GatewayConfig.ANY_MODEL))
                    .toList();
            MockModel started = MockModel.start(tokens, listed, wallClock);
            mock = started;
            opened.push(started);
        }
        MockModel running = mock;
        List<UpstreamConfig> upstreamConfigs =
                Upstream.configured(config, environment, running == null ? null : running.baseUrl());
        keys = new GatewayKeys(config.admin().prefix());
        cooldowns = new Cooldowns(
                wallClock,
                redis,
                keys,
                registry,
                upstreamConfigs.stream().map(UpstreamConfig::name).toList());
        opened.push(cooldowns);
        managedKeys = new ManagedKeys(wallClock, redis, keys);
        opened.push(managedKeys);
        String conflict = managedKeys.conflict(config);
        if (conflict != null) {
            throw new IllegalArgumentException(config.source() + ": " + conflict);
        }
        upstream = new Upstream(
                upstreamConfigs,
                config.limits(),
                cooldowns,
                threads,
                config.server().maxConnections());
        opened.push(upstream);
    }

    /** The metered pipeline the servlets share: configuration in force, admission, refusals, upstream. */
    private void pipeline() {
        configs = new AtomicReference<>(config);
        BudgetAlerts alerts = new BudgetAlerts(
                () -> Objects.requireNonNull(configs.get()).alerts(), wallClock, cooldowns::claim, keys, registry);
        opened.push(alerts);
        gateway = new Gateway(
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
                new AtomicBoolean(),
                new ShadowRefusals());
    }

    /** The API listener: its selectors, its clients' idle timeout and its connection limit's count. */
    private ServerConnector apiConnector(Server server) {
        int selectors = Math.max(
                1,
                Math.min(
                        Math.min(4, Runtime.getRuntime().availableProcessors() / 2),
                        (config.server().maxThreads() - GatewayConfig.ServerSettings.MIN_THREADS) / 2));
        ServerConnector connector = connector(server, API, host, port, selectors, config);
        // an API client silent this long is gone (AsyncClient: not while the gateway waits for the upstream)
        connector.setIdleTimeout(config.server().clientIdleTimeout().toMillis());
        connections = new ConnectionLimit(config.server().maxConnections(), metrics);
        connector.addEventListener(connections);
        return connector;
    }

    private AccessLog accessLog() throws IOException {
        String target = environment.get("ACCESS_LOG");
        AccessLog accessLog = AccessLog.open(
                target != null && !target.isBlank() ? target : config.server().accessLog(), Clock.systemUTC());
        opened.push(accessLog);
        return accessLog;
    }

    /**
     * The two listeners' contexts, and the pass-through paths' rate-limit filters, which a reload
     * replaces.
     */
    private record Listeners(
            ServletContextHandler api,
            ServletContextHandler management,
            AtomicReference<Filter> passthroughLimit,
            AtomicReference<Filter> geminiLimit) {}

    private Listeners listeners(AccessLog accessLog) throws Exception {
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
        FilterHolder connectionLimit = new FilterHolder(Objects.requireNonNull(connections, "connections"));
        context.addFilter(connectionLimit, "/v1/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(connectionLimit, Gemini.PREFIX + "/*", EnumSet.of(DispatcherType.REQUEST));
        FilterHolder apiKeys = new FilterHolder(new ApiKeyFilter(gateway::config, metrics, managedKeys));
        context.addFilter(apiKeys, "/v1/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(apiKeys, Gemini.PREFIX + "/*", EnumSet.of(DispatcherType.REQUEST));
        AtomicReference<Filter> passthroughLimit = new AtomicReference<>();
        AtomicReference<Filter> geminiLimit = new AtomicReference<>();
        endpoints(context, passthroughLimit, geminiLimit);
        HealthCheck health = new HealthCheck(
                limiter,
                gateway::config,
                slots,
                store::nodesProblem,
                store.kind(),
                disabled ? "none" : store.kind(),
                disabled,
                config.limits().failOpen(),
                gateway.draining()::get);
        // the store was connected and the script loaded when the store was built; one check now
        // records that it answered, so a gateway whose store answers is ready from its first probe
        health.checkAtStart();
        // probes reach health without a secret on either listener; the admin surfaces only on management
        context.addServlet(new ServletHolder(new InfoServlets.Health(health)), "/health/*");
        context.addServlet(new ServletHolder(new InfoServlets.NotFound()), "/");
        // the metered and pass-through servlets answer asynchronously: every filter before them allows it
        for (FilterHolder filter : context.getServletHandler().getFilters()) {
            filter.setAsyncSupported(true);
        }
        for (ServletHolder servlet : context.getServletHandler().getServlets()) {
            servlet.setAsyncSupported(true);
        }
        return new Listeners(context, management(health), passthroughLimit, geminiLimit);
    }

    /** The API's servlets: metered endpoints, batches, Gemini, the pass-through paths and their filters. */
    private void endpoints(
            ServletContextHandler context,
            AtomicReference<Filter> passthroughLimit,
            AtomicReference<Filter> geminiLimit)
            throws Exception {
        for (OpenAiEndpoint endpoint : OpenAiEndpoint.values()) {
            context.addServlet(
                    new ServletHolder(new MeteredServlet(endpoint, gateway)), "/v1" + endpoint.upstreamPath());
        }
        BatchOwners batchOwners = new BatchOwners(store.redis(), keys);
        Batches batchCore = new Batches(gateway, batchOwners);
        opened.push(batchCore); // closed with the servlets that use it once started
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
        passthroughLimit.set(PassthroughServlet.rateLimitFilter(limiter, config));
        filterServlet(
                context,
                (request, response, chain) -> Objects.requireNonNull(passthroughLimit.get(), "passthroughLimit")
                        .doFilter(request, response, chain),
                "rate-limit");
        // Gemini's model list: the same request windows, refused in Google's shape
        geminiLimit.set(PassthroughServlet.rateLimitFilter(limiter, config, ErrorShape.GEMINI));
        filterServlet(context, new GeminiServlet.Listing(gateway, geminiLimit::get), "gemini-listing", GEMINI);
    }

    /** The management listener's context: health, metrics, the status page and JSON, the admin API. */
    private ServletContextHandler management(HealthCheck health) {
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
        ServletContextHandler admin = new ServletContextHandler();
        admin.setContextPath("/");
        admin.setVirtualHosts(List.of("@" + MANAGEMENT));
        admin.setErrorHandler(new JsonErrors());
        admin.addServlet(new ServletHolder(new InfoServlets.Health(health)), "/health/*");
        admin.addServlet(new ServletHolder(new InfoServlets.Metrics(registry)), "/metrics");
        admin.addServlet(new ServletHolder(new InfoServlets.StatusJson(status)), "/status.json");
        admin.addServlet(new ServletHolder(new AdminServlet(gateway::config, managedKeys)), "/admin/*");
        admin.addServlet(new ServletHolder(new InfoServlets.StatusPage()), "/");
        return admin;
    }

    private void listen(Server server) throws Exception {
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
    }

    /** The reload of {@code GATEWAY_CONFIG} by signal and file watch; {@code null} without a file. */
    private @Nullable ConfigReloader reloader(Listeners listeners) {
        String file = environment.get("GATEWAY_CONFIG");
        if (file == null || file.isBlank()) {
            return null;
        }
        ConfigReloader reloader = new ConfigReloader(
                Path.of(file.trim()),
                environment,
                configs,
                next -> {
                    listeners.passthroughLimit().set(PassthroughServlet.rateLimitFilter(limiter, next));
                    listeners.geminiLimit().set(PassthroughServlet.rateLimitFilter(limiter, next, ErrorShape.GEMINI));
                },
                managedKeys::conflict,
                registry);
        if (config.server().watchConfig()) {
            reloader.watch();
        }
        return reloader;
    }

    private void closeOpened(Throwable failure) {
        for (AutoCloseable resource : opened) {
            try {
                resource.close();
            } catch (Exception e) {
                failure.addSuppressed(e);
            }
        }
        opened.clear();
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
        return configured != null ? configured : GatewayServer.DEFAULT_HOST;
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
