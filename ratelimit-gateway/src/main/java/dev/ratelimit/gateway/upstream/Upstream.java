package dev.ratelimit.gateway.upstream;

import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.Limits;
import dev.ratelimit.gateway.config.UpstreamConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.MultiplexConnectionPool;
import org.eclipse.jetty.client.ProxyAuthenticationProtocolHandler;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.WWWAuthenticationProtocolHandler;
import org.eclipse.jetty.client.transport.HttpClientConnectionFactory;
import org.eclipse.jetty.client.transport.HttpClientTransportDynamic;
import org.eclipse.jetty.http.HttpCookieStore;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.ClientConnectionFactoryOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.CyclicTimeout;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The servers behind the gateway, reached with one Jetty HTTP client: each upstream has a base URL,
 * the gateway's own key for it (never the client's), the API it speaks and the models it serves,
 * and a request is routed by its model ({@link #route}). Nothing here holds a thread while it
 * waits: a request is sent, its response headers reach an {@link Answer} on one of the client's
 * threads, and its body is a {@link Body} read as it arrives, by demand ({@link Content.Source}).
 *
 * <p>An upstream that answers 429 or 529 with {@code retry-after-ms}/{@code retry-after}, or whose
 * rate-limit headers ({@code x-ratelimit-remaining-*}, {@code anthropic-ratelimit-*-remaining}) say
 * nothing is left, puts that model into a cooldown ({@link Cooldowns}): until it ends the model's
 * requests are answered 429 by the gateway, except one probe per interval; a probe answered 2xx ends
 * it early.
 */
public final class Upstream implements AutoCloseable {

    /** The streams an h2c connection is expected to carry until its peer's SETTINGS say. */
    private static final int H2C_INITIAL_STREAMS = 100;

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

    /** One upstream. */
    static final class Target {
        private final UpstreamConfig config;
        private final String base;
        private final boolean secure;
        /** The most endpoint URIs kept parsed. */
        private static final int ENDPOINTS = 256;

        /** The URIs of the metered endpoints' paths, parsed once rather than per request. */
        private final Map<String, URI> endpoints = new ConcurrentHashMap<>();

        Target(UpstreamConfig config) {
            this.config = config;
            this.secure = "https".equals(config.url().getScheme());
            String text = config.url().toString();
            this.base = text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
        }

        /**
         * The URI of an endpoint's path below this upstream's base: parsed once for the few fixed
         * paths, each time past {@value #ENDPOINTS} (Gemini's paths name the model, which a pattern
         * such as {@code gemini-*} leaves open).
         */
        URI endpoint(String path) {
            URI uri = endpoints.get(path);
            if (uri != null) {
                return uri;
            }
            return endpoints.size() < ENDPOINTS
                    ? endpoints.computeIfAbsent(path, absent -> URI.create(base + absent))
                    : URI.create(base + path);
        }

        String name() {
            return config.name();
        }

        Protocol protocol() {
            return config.protocol();
        }

        String describe() {
            return config.name() + " (" + config.protocol().id() + ", " + base + (config.http2() ? ", HTTP/2" : "")
                    + ", models "
                    + String.join(" ", config.models()) + ")";
        }
    }

    /** The upstream a request goes to, for one model; a probe's answer can end the model's cooldown. */
    public final class Route {
        private final Target target;
        private final String model;
        private final boolean probe;

        private Route(Target target, String model, boolean probe) {
            this.target = target;
            this.model = model;
            this.probe = probe;
        }

        Target target() {
            return target;
        }

        boolean probe() {
            return probe;
        }

        /**
         * Starts this route's model's cooldown for {@code delay}: an upstream refusal whose retry
         * time is in its body (Google's {@code RetryInfo}) rather than its headers.
         */
        public void coolDown(Duration delay) {
            Instant now = cooldowns.clock().instant();
            cooldowns.start(target.name(), model, now.plus(delay), target.config.probeInterval());
        }

        /**
         * Sends a request to this route's upstream; its response headers, which may start or end the
         * model's cooldown, or its failure reach {@code answer}.
         *
         * @param headers headers to send besides the gateway's own (such as {@code anthropic-version})
         */
        public void send(
                String method,
                String pathAndQuery,
                @Nullable String contentType,
                byte[] body,
                Map<String, String> headers,
                Answer answer) {
            Upstream.this.send(target, method, pathAndQuery, contentType, body, headers, this, answer);
        }
    }

    /** What routing a model found: a route, no upstream serving it, or a cooldown. */
    public sealed interface Routing permits Routed, NotServed, Cooling {}

    public record Routed(Route route) implements Routing {}

    /** No upstream of the protocol serves the model; {@code elsewhere} is another protocol whose upstream does. */
    public record NotServed(@Nullable Protocol elsewhere) implements Routing {}

    public record Cooling(String upstream, Duration retryAfter) implements Routing {}

    /**
     * Where a response goes: its headers, or the failure that came instead. One of the two is called,
     * once, on one of the client's threads (or the scheduler's, for the first-byte timeout), and
     * must not block.
     */
    public interface Answer {

        /** The response's status and headers arrived; its body is read from {@link Exchange#body()}. */
        void headers(Exchange exchange);

        /** The upstream could not be reached or sent no response headers in time. */
        void failed(Failure failure);
    }

    private final HttpClient client;
    /** The client of the upstreams that speak HTTP/2, when one does. */
    private final @Nullable HttpClient client2;

    private final List<Target> targets;
    private final Target fallback;
    private final Cooldowns cooldowns;
    private final Duration firstByteTimeout;
    private final Duration idleTimeout;

    /**
     * @param upstreams the upstreams, in the order a pattern is tried; at least one
     * @param executor the threads that run the client's I/O and callbacks (the gateway's one pool)
     * @param maxConnections the most connections to one upstream, and requests queued for one: the
     *     API listener's {@code server.max-connections}
     */
    public Upstream(
            List<UpstreamConfig> upstreams, Limits limits, Cooldowns cooldowns, Executor executor, int maxConnections)
            throws Exception {
        if (upstreams.isEmpty()) {
            throw new IllegalArgumentException("at least one upstream");
        }
        this.targets = upstreams.stream().map(Target::new).toList();
        this.fallback = targets.stream()
                .filter(target -> target.protocol() == Protocol.OPENAI)
                .findFirst()
                .orElse(targets.get(0));
        this.cooldowns = cooldowns;
        this.firstByteTimeout = limits.firstByteTimeout();
        this.idleTimeout = limits.idleTimeout();
        this.client = start(new HttpClient(), executor, limits, maxConnections);
        this.client2 = upstreams.stream().anyMatch(UpstreamConfig::http2)
                ? start(new HttpClient(http2(limits)), executor, limits, maxConnections)
                : null;
    }

    /**
     * The transport of the upstreams that speak HTTP/2 ({@code http-version: 2}): {@code h2} offered
     * before {@code http/1.1} by ALPN over TLS, {@code h2c} with prior knowledge in clear. A stream's
     * receive window is the relay's buffer ({@code limits.stream-buffer-bytes}), so a client that
     * reads slowly stops its stream's upstream at the same bound as over HTTP/1.1, without stopping
     * the other streams of the connection.
     */
    private static HttpClientTransportDynamic http2(Limits limits) {
        ClientConnector connector = new ClientConnector();
        HTTP2Client h2 = new HTTP2Client(connector);
        int window = Math.max(limits.streamBufferBytes(), 16 * 1024); // at least one frame of the default size
        h2.setInitialStreamRecvWindow(window);
        h2.setInitialSessionRecvWindow(Math.max(16 * 1024 * 1024, window));
        HttpClientTransportDynamic transport = new HttpClientTransportDynamic(
                connector, new ClientConnectionFactoryOverHTTP2.HTTP2(h2), HttpClientConnectionFactory.HTTP11);
        // In clear text the connection is h2c from its first byte, so while it opens the streams that
        // arrive meanwhile count on it carrying 100 (the least RFC 9113 asks a server to allow; its
        // SETTINGS then give the real number) rather than each opening a connection of its own. Over
        // TLS, ALPN may settle on HTTP/1.1, whose connection carries one exchange: Jetty's default.
        transport.setConnectionPoolFactory(destination -> new MultiplexConnectionPool(
                destination,
                destination.getHttpClient().getMaxConnectionsPerDestination(),
                destination.getOrigin().isSecure() ? 1 : H2C_INITIAL_STREAMS));
        return transport;
    }

    private static HttpClient start(HttpClient client, Executor executor, Limits limits, int maxConnections)
            throws Exception {
        client.setExecutor(executor); // started already, so the client never stops it: the pool is the gateway's
        client.setConnectTimeout(limits.connectTimeout().toMillis());
        client.setIdleTimeout(limits.idleTimeout().toMillis());
        client.setFollowRedirects(false);
        // one upstream connection per client connection at most (HTTP/1.1 holds one exchange each), so
        // the API listener's server.max-connections, not a pool of the client's, bounds the streams
        client.setMaxConnectionsPerDestination(maxConnections);
        client.setMaxRequestsQueuedPerDestination(maxConnections);
        client.setUserAgentField(null);
        // no cookie jar: an upstream's Set-Cookie is not the gateway's to keep, nor to send back on
        // another tenant's request (and the default store builds a URI per request)
        client.setHttpCookieStore(new HttpCookieStore.Empty());
        client.start();
        // the gateway answers challenges with nothing: a 401 is relayed (as a 502), not an exception mid-body
        client.getProtocolHandlers().remove(WWWAuthenticationProtocolHandler.NAME);
        client.getProtocolHandlers().remove(ProxyAuthenticationProtocolHandler.NAME);
        return client;
    }

    /**
     * The upstreams a gateway starts with: the file's {@code upstreams:}; else {@code UPSTREAM_URL}
     * (with {@code UPSTREAM_API_KEY}, {@code UPSTREAM_PROTOCOL}, default {@code openai}, and {@code
     * UPSTREAM_HTTP_VERSION}, default {@code 1.1}) serving
     * every model; else the built-in mock model, speaking every protocol.
     */
    public static List<UpstreamConfig> configured(
            GatewayConfig config, Map<String, String> environment, @Nullable URI mock) {
        String url = environment.get("UPSTREAM_URL");
        boolean shorthand = url != null && !url.isBlank();
        if (!config.upstreams().isEmpty()) {
            if (shorthand) {
                throw new IllegalArgumentException("UPSTREAM_URL is set and " + config.source()
                        + " has an upstreams: section; use one or the other (the section can name several)");
            }
            return config.upstreams();
        }
        Duration probe = UpstreamConfig.DEFAULT_PROBE_INTERVAL;
        if (shorthand) {
            String protocol = environment.getOrDefault("UPSTREAM_PROTOCOL", "openai");
            Protocol parsed;
            try {
                parsed = Protocol.valueOf(protocol.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "UPSTREAM_PROTOCOL must be openai, anthropic or gemini, was '" + protocol + "'", e);
            }
            return List.of(new UpstreamConfig(
                    "upstream",
                    UpstreamConfig.url(url, "UPSTREAM_URL"),
                    environment.get("UPSTREAM_API_KEY"),
                    parsed,
                    List.of("*"),
                    probe,
                    UpstreamConfig.http2(environment.get("UPSTREAM_HTTP_VERSION"), "UPSTREAM_HTTP_VERSION")));
        }
        if (mock == null) {
            throw new IllegalArgumentException("no upstream: set UPSTREAM_URL or the file's upstreams:");
        }
        return List.of(
                new UpstreamConfig("mock", mock, null, Protocol.OPENAI, List.of("*"), probe),
                new UpstreamConfig("mock", mock, null, Protocol.ANTHROPIC, List.of("*"), probe),
                new UpstreamConfig("mock", mock.resolve(Gemini.PREFIX), null, Protocol.GEMINI, List.of("*"), probe));
    }

    public String description() {
        if (targets.stream().allMatch(target -> target.name().equals("mock"))) {
            return "built-in mock model"; // it speaks every protocol
        }
        return targets.stream().map(Target::describe).collect(Collectors.joining("; "));
    }

    public Cooldowns cooldowns() {
        return cooldowns;
    }

    /**
     * Routes a request for {@code model} in {@code protocol}: the upstream that names it exactly,
     * else the first (in file order) whose pattern matches; then its cooldown, if one is in force,
     * lets the request through only as the interval's probe.
     */
    public Routing route(Protocol protocol, String model) {
        Target target = find(protocol, model);
        if (target == null) {
            for (Protocol other : Protocol.values()) {
                if (other != protocol && find(other, model) != null) {
                    return new NotServed(other);
                }
            }
            return new NotServed(null);
        }
        Instant until = cooldowns.until(target.name(), model);
        if (until == null) {
            return new Routed(new Route(target, model, false));
        }
        if (cooldowns.tryProbe(target.name(), model, target.config.probeInterval())) {
            return new Routed(new Route(target, model, true));
        }
        return new Cooling(target.name(), Duration.between(cooldowns.clock().instant(), until));
    }

    private @Nullable Target find(Protocol protocol, String model) {
        for (Target target : targets) {
            if (target.protocol() == protocol && target.config.servesExactly(model)) {
                return target;
            }
        }
        for (Target target : targets) {
            if (target.protocol() == protocol && target.config.servesByPattern(model)) {
                return target;
            }
        }
        return null;
    }

    /** A response whose headers have arrived; its body is read from {@link #body()}. */
    public static final class Exchange {
        private final Request request;
        private final Response response;
        private final Body body;

        Exchange(Request request, Response response, Body body) {
            this.request = request;
            this.response = response;
            this.body = body;
        }

        Response response() {
            return response;
        }

        /** The body, read by demand as it arrives. */
        public Body body() {
            return body;
        }

        public int status() {
            return response.getStatus();
        }

        @Nullable
        public String header(String name) {
            return response.getHeaders().get(name);
        }

        public boolean isEventStream() {
            String type = header("Content-Type");
            return type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream");
        }

        /**
         * Reads the whole body, up to {@link #MAX_BODY_BYTES}, as it arrives: {@code then} gets the
         * bytes, or the failure (a body too large, broken off or silent past the idle timeout).
         */
        public void readAll(BiConsumer<byte @Nullable [], @Nullable IOException> then) {
            new Reading(body, then).run();
        }

        /** Stops the upstream response: its connection is closed and its body fails. */
        public void abort() {
            body.idle.destroy();
            request.abort(new IOException("the gateway's client went away"));
        }
    }

    /** Reads a whole body without a thread of its own: each demand callback reads what arrived. */
    private static final class Reading implements Runnable {
        private final Body body;
        private final BiConsumer<byte @Nullable [], @Nullable IOException> then;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Reading(Body body, BiConsumer<byte @Nullable [], @Nullable IOException> then) {
            this.body = body;
            this.then = then;
        }

        @Override
        public void run() {
            while (true) {
                Content.Chunk chunk = body.read();
                if (chunk == null) {
                    body.demand(this);
                    return;
                }
                if (Content.Chunk.isFailure(chunk)) {
                    Throwable failure = chunk.getFailure();
                    then.accept(
                            null,
                            failure instanceof IOException io
                                    ? io
                                    : new IOException(String.valueOf(failure.getMessage()), failure));
                    return;
                }
                try {
                    int size = chunk.remaining();
                    if (bytes.size() + size > MAX_BODY_BYTES) {
                        body.fail(new IOException("too large"));
                        then.accept(
                                null, new IOException("the upstream's response exceeds " + MAX_BODY_BYTES + " bytes"));
                        return;
                    }
                    java.nio.ByteBuffer buffer = chunk.getByteBuffer();
                    byte[] part = new byte[size];
                    buffer.get(part);
                    bytes.write(part, 0, size);
                    if (chunk.isLast()) {
                        then.accept(bytes.toByteArray(), null);
                        return;
                    }
                } finally {
                    chunk.release();
                }
            }
        }
    }

    /**
     * An upstream response's body as it arrives: Jetty's content source, read by demand, plus the
     * idle timeout. The timeout runs only while a demand waits for the upstream, so a relay that
     * stopped reading because its client is slow is never taken for a silent upstream.
     */
    static final class Body implements Content.Source {
        private final Content.Source source;
        private final CyclicTimeout idle;
        private final long idleMillis;

        /**
         * @param executor runs the abort of a silent upstream, and the relay's step it wakes (which
         *     settles), off the scheduler's one thread that times everything
         */
        Body(Content.Source source, Request request, Scheduler scheduler, Executor executor, Duration idleTimeout) {
            this.source = source;
            this.idleMillis = idleTimeout.toMillis();
            this.idle = new CyclicTimeout(scheduler) {
                @Override
                public void onTimeoutExpired() {
                    executor.execute(() -> request.abort(new TimeoutException(
                            "the upstream sent nothing for " + idleMillis + " ms (limits.upstream-idle-timeout-ms)")));
                }
            };
        }

        @Override
        public Content.@Nullable Chunk read() {
            Content.Chunk chunk = source.read();
            if (chunk != null) {
                if (chunk.isLast() || Content.Chunk.isFailure(chunk)) {
                    idle.destroy();
                } else {
                    idle.cancel();
                }
            }
            return chunk;
        }

        @Override
        public void demand(Runnable demandCallback) {
            idle.schedule(idleMillis, TimeUnit.MILLISECONDS);
            source.demand(demandCallback);
        }

        @Override
        public void fail(Throwable failure) {
            idle.destroy();
            source.fail(failure);
        }
    }

    /** The upstream could not be reached or did not answer in time; nothing was produced. */
    public static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        final boolean timeout;

        Failure(String message, boolean timeout, @Nullable Throwable cause) {
            super(message, cause);
            this.timeout = timeout;
        }

        /** How the settlement metrics name this ending. */
        public String ending() {
            return timeout ? "upstream_timeout" : "upstream_unreachable";
        }

        /** Whether the upstream did not answer in time, as opposed to not being reached at all. */
        public boolean timeout() {
            return timeout;
        }
    }

    /**
     * Sends a request to the first OpenAI-protocol upstream (the only one of a one-upstream gateway):
     * for paths relayed without a model; its response headers or its failure reach {@code answer}.
     *
     * @param pathAndQuery the path below the upstream's base, such as {@code /models}
     */
    public void send(String method, String pathAndQuery, @Nullable String contentType, byte[] body, Answer answer) {
        send(fallback, method, pathAndQuery, contentType, body, Map.of(), null, answer);
    }

    /**
     * Sends a request relayed without a model to the first upstream of {@code protocol}, such as
     * Gemini's model list or a batch's control calls, with {@code headers} besides the gateway's own
     * (such as {@code anthropic-version}); {@code false}, sending nothing, when no upstream speaks it.
     */
    public boolean send(
            Protocol protocol,
            String method,
            String pathAndQuery,
            @Nullable String contentType,
            byte[] body,
            Map<String, String> headers,
            Answer answer) {
        for (Target target : targets) {
            if (target.protocol() == protocol) {
                send(target, method, pathAndQuery, contentType, body, headers, null, answer);
                return true;
            }
        }
        return false;
    }

    private void send(
            Target target,
            String method,
            String pathAndQuery,
            @Nullable String contentType,
            byte[] body,
            Map<String, String> extra,
            @Nullable Route route,
            Answer answer) {
        String apiKey = target.config.apiKey();
        HttpClient via = target.config.http2() && client2 != null ? client2 : client;
        // a route's path is its endpoint's (a few fixed ones); a relayed path may be anything
        Request request = via.newRequest(
                        route != null ? target.endpoint(pathAndQuery) : URI.create(target.base + pathAndQuery))
                .method(method)
                // silence is timed by Body, only while the gateway waits for the upstream's bytes
                .idleTimeout(0, TimeUnit.MILLISECONDS)
                .headers(headers -> {
                    headers.remove(HttpHeader.USER_AGENT);
                    extra.forEach(headers::put);
                    if (apiKey != null) {
                        switch (target.protocol()) {
                            case ANTHROPIC -> headers.put("x-api-key", apiKey);
                            case GEMINI -> headers.put("x-goog-api-key", apiKey);
                            case OPENAI -> headers.put(HttpHeader.AUTHORIZATION, "Bearer " + apiKey);
                        }
                    }
                    headers.put(HttpHeader.ACCEPT, "application/json, text/event-stream");
                });
        if (body.length > 0 || method.equals("POST") || method.equals("PUT") || method.equals("PATCH")) {
            request.body(new BytesRequestContent(contentType == null ? "application/json" : contentType, body));
        }
        if (via == client2 && !target.secure) {
            request.version(HttpVersion.HTTP_2); // h2c with prior knowledge; over TLS, ALPN decides
        }
        request.send(new Waiting(via, request, route, answer));
    }

    /** Waits, without a thread, for one request's response headers or its failure, up to the first-byte timeout. */
    private final class Waiting implements Response.Listener {
        private final HttpClient client;
        private final Request request;
        private final @Nullable Route route;
        private final Answer answer;
        private final AtomicBoolean decided = new AtomicBoolean();
        private final Scheduler.Task firstByte;

        Waiting(HttpClient client, Request request, @Nullable Route route, Answer answer) {
            this.client = client;
            this.request = request;
            this.route = route;
            this.answer = answer;
            this.firstByte =
                    client.getScheduler().schedule(this::expired, firstByteTimeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** On the scheduler's thread: the answer (which cancels the admission) runs on the pool's. */
        private void expired() {
            if (decided.compareAndSet(false, true)) {
                client.getExecutor().execute(() -> {
                    TimeoutException timeout = new TimeoutException();
                    request.abort(timeout);
                    answer.failed(new Failure(
                            "The upstream did not answer within " + firstByteTimeout.toMillis() + " ms.",
                            true,
                            timeout));
                });
            }
        }

        @Override
        public void onContentSource(Response response, Content.Source source) {
            if (!decided.compareAndSet(false, true)) {
                source.fail(new TimeoutException("the first-byte timeout passed"));
                return;
            }
            firstByte.cancel();
            Exchange exchange = new Exchange(
                    request,
                    response,
                    new Body(source, request, client.getScheduler(), client.getExecutor(), idleTimeout));
            if (route != null) {
                observe(route, exchange);
            }
            answer.headers(exchange);
        }

        @Override
        public void onComplete(Result result) {
            if (result.isFailed() && decided.compareAndSet(false, true)) {
                firstByte.cancel();
                Throwable cause = result.getFailure();
                boolean timeout = cause instanceof TimeoutException;
                answer.failed(new Failure("The upstream could not be reached: " + cause, timeout, cause));
            }
        }
    }

    /** Starts a cooldown when the upstream says the model is out, and ends one when a probe got an answer. */
    private void observe(Route route, Exchange exchange) {
        int status = exchange.status();
        Instant now = cooldowns.clock().instant();
        Instant until = null;
        if (status == 429 || status == 529) {
            Duration delay = retryDelay(exchange, now);
            until = delay == null ? null : now.plus(delay);
        } else if (status >= 200 && status <= 299) {
            until = exhausted(exchange, now);
        }
        if (until != null && until.isAfter(now)) {
            cooldowns.start(route.target.name(), route.model, until, route.target.config.probeInterval());
        } else if (route.probe && status >= 200 && status <= 299) {
            cooldowns.end(route.target.name(), route.model);
        }
    }

    /** {@code retry-after-ms}, else {@code retry-after} (seconds or an HTTP date); {@code null} if neither. */
    public static @Nullable Duration retryDelay(Exchange exchange, Instant now) {
        return retryDelay(exchange.header("retry-after-ms"), exchange.header("retry-after"), now);
    }

    public static @Nullable Duration retryDelay(@Nullable String millis, @Nullable String seconds, Instant now) {
        if (millis != null) {
            try {
                double value = Double.parseDouble(millis.trim());
                if (value > 0 && Double.isFinite(value)) {
                    return Duration.ofNanos((long) Math.ceil(value * 1_000_000));
                }
            } catch (NumberFormatException e) {
                // try retry-after
            }
        }
        if (seconds != null) {
            String value = seconds.trim();
            try {
                double parsed = Double.parseDouble(value);
                if (parsed > 0 && Double.isFinite(parsed)) {
                    return Duration.ofNanos((long) Math.ceil(parsed * 1_000_000_000));
                }
                return null;
            } catch (NumberFormatException e) {
                try {
                    Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)
                            .toInstant();
                    return at.isAfter(now) ? Duration.between(now, at) : null;
                } catch (DateTimeParseException unparsed) {
                    return null;
                }
            }
        }
        return null;
    }

    /**
     * When a unit the upstream reports as used up ({@code remaining} 0) comes back: the latest such
     * reset of OpenAI's {@code x-ratelimit-*-requests|tokens} or Anthropic's {@code
     * anthropic-ratelimit-*}; {@code null} when none is used up or its reset cannot be read.
     */
    static @Nullable Instant exhausted(Exchange exchange, Instant now) {
        Instant latest = null;
        for (String unit : List.of("requests", "tokens")) {
            if ("0".equals(trimmed(exchange.header("x-ratelimit-remaining-" + unit)))) {
                Duration reset = goDuration(exchange.header("x-ratelimit-reset-" + unit));
                latest = later(latest, reset == null ? null : now.plus(reset));
            }
        }
        for (String unit : List.of("requests", "tokens", "input-tokens", "output-tokens")) {
            if ("0".equals(trimmed(exchange.header("anthropic-ratelimit-" + unit + "-remaining")))) {
                latest = later(latest, rfc3339(exchange.header("anthropic-ratelimit-" + unit + "-reset")));
            }
        }
        return latest;
    }

    private static @Nullable String trimmed(@Nullable String value) {
        return value == null ? null : value.trim();
    }

    private static @Nullable Instant later(@Nullable Instant a, @Nullable Instant b) {
        return a == null ? b : b == null || a.isAfter(b) ? a : b;
    }

    private static @Nullable Instant rfc3339(@Nullable String value) {
        if (value == null) {
            return null;
        }
        try {
            return OffsetDateTime.parse(value.trim()).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static final Pattern GO_PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(h|ms|m|s)");

    /** A Go duration as OpenAI writes its resets ({@code 1s}, {@code 6m0s}, {@code 12ms}); {@code null} if not one. */
    public static @Nullable Duration goDuration(@Nullable String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        Matcher part = GO_PART.matcher(value.trim());
        long nanos = 0;
        int at = 0;
        while (part.find() && part.start() == at) {
            double amount = Double.parseDouble(part.group(1));
            long unit = switch (part.group(2)) {
                case "h" -> 3_600_000_000_000L;
                case "m" -> 60_000_000_000L;
                case "s" -> 1_000_000_000L;
                default -> 1_000_000L;
            };
            nanos += (long) Math.ceil(amount * unit);
            at = part.end();
        }
        return at == value.trim().length() && at > 0 ? Duration.ofNanos(nanos) : null;
    }

    /**
     * Copies the upstream's response headers that the client should see; {@code Retry-After} and
     * {@code retry-after-ms} only when the upstream itself refused the request. The upstream's own
     * rate-limit headers never: the gateway's describe the tenant's budgets.
     */
    public static void copyHeaders(Exchange exchange, HttpServletResponse response) {
        int status = exchange.status();
        boolean refusal = status == 429 || status == 503 || status == 529;
        for (HttpField field : exchange.response().getHeaders()) {
            String name = field.getLowerCaseName();
            boolean retry =
                    name.equals("retry-after") || name.equals("retry-after-ms") || name.equals("x-should-retry");
            if ((DROPPED.contains(name) && !(retry && refusal))
                    || name.startsWith("x-ratelimit-")
                    || name.startsWith("anthropic-ratelimit-")) {
                continue;
            }
            response.addHeader(field.getName(), field.getValue());
        }
    }

    /** The configured upstreams, for the status page. */
    List<Target> targets() {
        return new ArrayList<>(targets);
    }

    @Override
    public void close() {
        for (HttpClient each : new HttpClient[] {client, client2}) {
            try {
                if (each != null) {
                    each.stop();
                }
            } catch (Exception e) {
                // shutting down anyway
            }
        }
        cooldowns.close();
    }
}
