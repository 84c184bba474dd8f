package dev.ratelimit.gateway.web;

import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.gemini.GeminiEndpoint;
import dev.ratelimit.gateway.protocol.openai.Requests;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Google's Gemini API under {@code /v1beta}: {@code POST /models/{model}:generateContent} and {@code
 * :streamGenerateContent} metered, {@code :countTokens} answered by the gateway (both by the {@link
 * MeteredServlet} of a {@link GeminiEndpoint}), {@code GET /models} and {@code GET /models/{model}}
 * relayed to the first Gemini upstream with request windows only ({@link Listing} limits them, as the
 * pass-through paths are), and every other path or method a 404 in Google's shape, charged nothing.
 * The client's {@code key} query parameter never reaches the upstream.
 */
public final class GeminiServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient Gateway gateway;
    private final MeteredServlet metered;

    public GeminiServlet(Gateway gateway, GeminiEndpoint endpoint) {
        this.gateway = gateway;
        this.metered = new MeteredServlet(endpoint, gateway);
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String method = request.getMethod();
        String path = request.getPathInfo();
        Gemini.ModelCall called = Gemini.ModelCall.of(path);
        if (method.equals("POST") && called != null && called.served()) {
            metered.service(request, response);
        } else if (Gemini.isModelListing(method, path)) {
            byte[] body = (byte[]) request.getAttribute(PassthroughServlet.BODY);
            PassthroughServlet.relay(
                    gateway,
                    request,
                    response,
                    Protocol.GEMINI,
                    path + Gemini.queryWithoutKey(request.getQueryString()),
                    body == null ? new byte[0] : body);
        } else {
            unknown(gateway, request, response);
        }
    }

    /** Google's 404 for a path or method under {@code /v1beta} the gateway neither meters nor relays; nothing is charged. */
    static void unknown(Gateway gateway, HttpServletRequest request, HttpServletResponse response) throws IOException {
        Requests.drain(request, response);
        gateway.metrics().refused("other", 404, "unknown_url");
        Gemini.error(
                response,
                404,
                "Unknown request URL: " + request.getMethod() + " " + request.getRequestURI()
                        + ". The gateway serves POST /v1beta/models/{model}:generateContent,"
                        + " :streamGenerateContent and :countTokens, and GET /v1beta/models and"
                        + " /v1beta/models/{model}.",
                null,
                null);
    }

    /**
     * Limits Gemini's model list as the pass-through paths are: the body read first, then the tiers'
     * request windows (the library's filter, refusing in Google's shape); every other request goes
     * on untouched (a metered one reads its own body).
     */
    public static final class Listing implements Filter {

        private final Gateway gateway;
        private final Supplier<Filter> limit;

        /** @param limit the rate limit filter in force (a reload swaps it) */
        public Listing(Gateway gateway, Supplier<Filter> limit) {
            this.gateway = gateway;
            this.limit = limit;
        }

        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            if (!Gemini.isModelListing(request.getMethod(), request.getPathInfo())) {
                chain.doFilter(req, res);
                return;
            }
            PassthroughServlet.BodyFirst.readThenLimit(
                    gateway,
                    Protocol.GEMINI,
                    request,
                    (HttpServletResponse) res,
                    (limitedRequest, limitedResponse) -> Objects.requireNonNull(limit.get(), "limit")
                            .doFilter(limitedRequest, limitedResponse, chain));
        }
    }
}
