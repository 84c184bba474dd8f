package dev.ratelimit.gateway.web;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.gateway.batch.AnthropicBatchServlet;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.OpenAiEndpoint;
import dev.ratelimit.gateway.protocol.openai.Requests;
import dev.ratelimit.gateway.upstream.AsyncClient;
import dev.ratelimit.gateway.upstream.Relay;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.http.ErrorShape;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The pass-through {@code /v1} paths (the configuration's {@code passthrough:} list, by default
 * {@code GET /v1/models} and {@code GET /v1/models/{id}}): relayed to the upstream as they are,
 * with request limits only; any other {@code /v1} path is 404 and charged nothing, and so is a
 * metered endpoint's path with another method than {@code POST} (answered by the metered servlet
 * with {@link #unknown}; the configuration refuses a list entry naming a metered path). The library's {@link RateLimitFilter} guards these paths: it charges the
 * tenant's request windows (no tokens, no concurrency slot) and answers a refusal itself, in
 * OpenAI's error shape; this servlet only relays what it lets through. The response streams back as
 * it arrives, relayed asynchronously ({@link Relay}); the request's body (at most {@code
 * max-body-bytes}) is read by {@link BodyFirst} before the filter, on the request's thread.
 *
 * <p>Its filters, in order: {@link ApiKeyFilter} (the tenant), {@link BodyFirst} (the body read and
 * bounded, so an oversized one is refused before anything is charged), then {@link RateLimitFilter}.
 */
public final class PassthroughServlet extends HttpServlet {

    /** The servlet's name, which its filters are mapped to. */
    public static final String NAME = "passthrough";

    private static final long serialVersionUID = 1L;
    /** The request attribute holding a relayed request's body, read by {@link BodyFirst}. */
    static final String BODY = "gateway.body";

    private final transient Gateway gateway;

    public PassthroughServlet(Gateway gateway) {
        this.gateway = gateway;
    }

    /**
     * Builds the filter that limits the pass-through paths: the tiers' request windows, OpenAI's
     * header family and error body, the IETF draft headers, and no {@code X-RateLimit-*} family
     * (the metered endpoints send none either). The tiers are the file's and the copies that keys
     * in shadow are charged under.
     */
    public static RateLimitFilter rateLimitFilter(RateLimiter limiter, GatewayConfig config) {
        return rateLimitFilter(limiter, config, ErrorShape.OPENAI);
    }

    /** The same filter with refusals in {@code shape}: Google's for Gemini's model list. */
    public static RateLimitFilter rateLimitFilter(RateLimiter limiter, GatewayConfig config, ErrorShape shape) {
        Map<String, Tier> tiers = new LinkedHashMap<>();
        config.tiers().values().forEach(tier -> tiers.put(tier.requests().name(), tier.requests()));
        config.keys()
                .forEach(key -> tiers.putIfAbsent(
                        key.tier().requests().name(), key.tier().requests()));
        TierPolicy.Builder requestWindows = TierPolicy.builder();
        tiers.values().forEach(requestWindows::tier);
        return RateLimitFilter.builder(limiter, requestWindows.build())
                .header(HeaderFamily.X_RATELIMIT, false)
                .header(HeaderFamily.OPENAI, true)
                .errorShape(shape)
                .build();
    }

    /** The metered endpoints, for the 404's message. */
    private static final String METERED = java.util.Arrays.stream(OpenAiEndpoint.values())
            .map(endpoint -> "POST /v1" + endpoint.upstreamPath())
            .collect(java.util.stream.Collectors.joining(", "));

    /**
     * Answers 404 for a {@code /v1} path or method the gateway neither meters nor relays, in
     * Anthropic's shape for an {@linkplain Anthropic#isAnthropicCaller Anthropic caller} and OpenAI's
     * otherwise, counted in {@code gateway_refusals_total{endpoint="other",status="404"}}; nothing is charged.
     */
    public static void unknown(Gateway gateway, HttpServletRequest request, HttpServletResponse response, String path)
            throws IOException {
        String method = request.getMethod();
        Requests.drain(request, response);
        gateway.metrics().refused("other", 404, "unknown_url");
        String relayed = Exchange.of(request).config().passthrough().stream()
                .map(GatewayConfig.Route::entry)
                .collect(java.util.stream.Collectors.joining(", "));
        if (Anthropic.isAnthropicCaller(request)) {
            Anthropic.error(
                    response,
                    404,
                    "Unknown request URL: " + method + " " + path + ". The gateway serves POST " + Anthropic.MESSAGES
                            + ", POST " + Anthropic.COUNT_TOKENS + ", the Message Batches under "
                            + AnthropicBatchServlet.PATH
                            + " and " + relayed + ".");
            return;
        }
        OpenAi.unknownUrl(
                response,
                "Unknown request URL: " + method + " " + path + ". The gateway serves " + METERED + " and " + relayed
                        + ".");
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) {
        byte[] body = (byte[]) request.getAttribute(BODY);
        String path = request.getPathInfo() == null ? "" : request.getPathInfo();
        String query = request.getQueryString() == null ? "" : "?" + request.getQueryString();
        relay(gateway, request, response, Protocol.OPENAI, path + query, body);
    }

    /**
     * Relays a request as it is to the first upstream of {@code protocol} (relayed paths go to an
     * OpenAI upstream, Gemini's model list to a Gemini one), its answer streamed back as it arrives;
     * with no upstream of the protocol, a 404 in its shape.
     *
     * @param pathAndQuery the path below the upstream's base, with the query to send
     */
    public static void relay(
            Gateway gateway,
            HttpServletRequest request,
            HttpServletResponse response,
            Protocol protocol,
            String pathAndQuery,
            byte[] body) {
        relay(gateway, request, response, protocol, pathAndQuery, body, Map.of());
    }

    /**
     * Relays as {@link #relay(Gateway, HttpServletRequest, HttpServletResponse, Protocol, String,
     * byte[])} does, with {@code headers} besides the gateway's own (such as {@code
     * anthropic-version}) sent to an upstream other than the OpenAI one, streamed whatever its size
     * (a batch's results).
     */
    public static void relay(
            Gateway gateway,
            HttpServletRequest request,
            HttpServletResponse response,
            Protocol protocol,
            String pathAndQuery,
            byte[] body,
            Map<String, String> headers) {
        GatewayConfig config = Exchange.of(request).config();
        AsyncClient client =
                AsyncClient.start(request, response, config.server().clientIdleTimeout());
        client.quiet(); // the upstream's timeouts run now
        Upstream.Answer answer = new Upstream.Answer() {
            @Override
            public void headers(Upstream.Exchange exchange) {
                try {
                    response.setStatus(exchange.status());
                    Upstream.copyHeaders(exchange, response);
                    new Relay(
                                    client,
                                    exchange.body(),
                                    Relay.AS_IS,
                                    config.limits().streamBufferBytes(),
                                    new Relay.Finish() {
                                        @Override
                                        public byte @Nullable [] ended(Relay.End end, @Nullable Throwable cause) {
                                            if (end != Relay.End.FINISHED) {
                                                // the client went away, or the upstream broke off (the
                                                // client sees a truncated body)
                                                exchange.abort();
                                            }
                                            return null;
                                        }

                                        @Override
                                        public void crashed(Throwable failure) {
                                            exchange.abort();
                                        }
                                    },
                                    gateway.metrics().relays())
                            .start();
                } catch (RuntimeException e) {
                    exchange.abort();
                    client.complete();
                }
            }

            @Override
            public void failed(Upstream.Failure failure) {
                try {
                    ApiErrors.upstreamFailed(protocol, response, failure);
                } catch (IOException | RuntimeException e) {
                    // the client is gone
                }
                client.complete();
            }
        };
        boolean sent = true;
        if (protocol == Protocol.OPENAI) { // the first OpenAI upstream, or the only upstream of a one-upstream gateway
            gateway.upstream().send(request.getMethod(), pathAndQuery, request.getContentType(), body, answer);
        } else {
            sent = gateway.upstream()
                    .send(protocol, request.getMethod(), pathAndQuery, request.getContentType(), body, headers, answer);
        }
        if (!sent) {
            try {
                ApiErrors.noUpstream(
                        protocol,
                        response,
                        "No " + protocol.id() + " upstream is configured to answer " + request.getMethod() + " "
                                + request.getRequestURI() + ".");
            } catch (IOException | RuntimeException e) {
                // the client is gone
            }
            client.complete();
        }
    }

    /**
     * Answers 404 for a path the pass-through list does not allow, then reads the body (at most {@code max-body-bytes}, else 413 in OpenAI's shape) before the rate
     * limit filter runs, so that bad input is never charged; and counts the filter's refusals in
     * {@code gateway_refusals_total} like the gateway's own, and the shadow refusals of those it
     * admitted for the status page.
     */
    public static final class BodyFirst implements Filter {

        private final Gateway gateway;
        private final GeminiServlet gemini;

        /** @param gemini answers a Gemini model's method under {@code /v1} ({@code /v1/models/{model}:generateContent}) */
        public BodyFirst(Gateway gateway, GeminiServlet gemini) {
            this.gateway = gateway;
            this.gemini = gemini;
        }

        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletResponse response = (HttpServletResponse) res;
            HttpServletRequest request = (HttpServletRequest) req;
            String path = "/v1" + (request.getPathInfo() == null ? "" : request.getPathInfo());
            String method = request.getMethod();
            GatewayConfig config = Exchange.of(request).config();
            if (Gemini.ModelCall.of(request.getPathInfo()) != null) {
                gemini.service(request, response); // Google's stable version: the same methods as under /v1beta
                return;
            }
            if (config.passthrough().stream().noneMatch(route -> route.matches(method, path))) {
                // not relayed, so nothing is charged: an unknown path costs a client no request
                unknown(gateway, request, response, path);
                return;
            }
            readThenLimit(gateway, Protocol.OPENAI, request, response, chain);
        }

        /**
         * Reads a relayed request's body (bounded; a bad query, charset or size answered in {@code
         * protocol}'s shape, uncharged), then runs {@code limited}: the rate limit filter and the
         * relay; counts the filter's refusals, and the shadow refusals of those it admitted.
         */
        static void readThenLimit(
                Gateway gateway,
                Protocol protocol,
                HttpServletRequest request,
                HttpServletResponse response,
                FilterChain limited)
                throws IOException, ServletException {
            try {
                Requests.checkQuery(request);
                Requests.contentType(request);
                request.setAttribute(
                        BODY,
                        Requests.bytes(
                                request, Exchange.of(request).config().limits().maxBodyBytes()));
            } catch (BadRequest e) {
                e.answer(protocol, "other", gateway.metrics(), response);
                return;
            }
            limited.doFilter(request, response);
            if (request.getAttribute(RateLimitFilter.DECISION_ATTRIBUTE) instanceof Decision decision) {
                if (!decision.allowed()) {
                    gateway.metrics().refused("other", 429, decision.window().isTokens() ? "tokens" : "requests");
                } else {
                    gateway.shadowRefusals()
                            .record(Exchange.of(request).account().tenant(), decision);
                }
            }
        }
    }
}
