package dev.ratelimit.gateway.web;

import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.GatewayConfig.ApiKey;
import dev.ratelimit.gateway.config.ManagedKeys;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.metrics.GatewayMetrics;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Identity from {@code Authorization: Bearer <key>}, or {@code x-api-key: <key>} (where Anthropic's
 * clients send it) when there is no bearer token, or {@code x-goog-api-key: <key>} or the query's
 * {@code key} under {@code /v1beta} (where Google's Gen AI clients send it): the key's SHA-256 digest is compared with
 * every configured key's in constant time (no early exit, no timing hint of how much matched), and
 * the key is never logged. An unknown or missing key gets OpenAI's 401 (Anthropic's {@code
 * authentication_error} on the Messages API's paths, Google's {@code UNAUTHENTICATED} under {@code
 * /v1beta}); a known one leaves the
 * tenant and its tier (from the configuration, never from the request) for the servlets in the
 * request's {@link Exchange}, and in
 * {@link RateLimitFilter}'s user and tier attributes for the filter on the pass-through paths.
 */
public final class ApiKeyFilter implements Filter {

    private static final String BEARER = "bearer ";

    private final Supplier<GatewayConfig> configs;
    private final GatewayMetrics metrics;
    private final ManagedKeys managed;

    /**
     * The keys are those of the configuration in force when a request arrives (a reload swaps them),
     * then the {@code managed} ones (the admin API's), with their tiers and teams from that configuration.
     */
    public ApiKeyFilter(Supplier<GatewayConfig> configs, GatewayMetrics metrics, ManagedKeys managed) {
        this.configs = configs;
        this.metrics = metrics;
        this.managed = managed;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String header = request.getHeader("Authorization");
        String apiKey = request.getHeader("x-api-key"); // where Anthropic's clients send it
        boolean bearer = header != null && header.regionMatches(true, 0, BEARER, 0, BEARER.length());
        String googleKey = bearer || (apiKey != null && !apiKey.isBlank()) ? null : Gemini.apiKey(request);
        if (!bearer && apiKey != null && !apiKey.isBlank()) {
            header = BEARER + apiKey;
        } else if (!bearer && googleKey != null) {
            header = BEARER + googleKey; // where Google's clients send it: x-goog-api-key or ?key=
        } else if (!bearer) {
            header = null;
        }
        boolean anthropic = Anthropic.isAnthropicCaller(request);
        boolean gemini = Gemini.isGeminiCaller(request);
        GatewayConfig config = configs.get(); // read once: the request's tier, caps and prices come from it
        ApiKey key =
                header == null ? null : find(header.substring(BEARER.length()).trim(), config);
        if (key == null) {
            // the body is never read: the connection cannot serve another request after it
            response.setHeader("Connection", "close");
        }
        if (key == null && gemini) {
            metrics.refused("auth", 401, "invalid_api_key");
            Gemini.error(
                    response,
                    401,
                    header == null
                            ? "An API key is required: send it in x-goog-api-key (or the key query parameter)."
                            : "API key not valid. Please pass a valid API key.",
                    null,
                    null);
            return;
        }
        if (header == null && anthropic) {
            metrics.refused("auth", 401, "invalid_api_key");
            Anthropic.error(response, 401, "x-api-key header is required (or 'Authorization: Bearer <key>').");
            return;
        }
        if (header == null) {
            response.setHeader("WWW-Authenticate", "Bearer");
            metrics.refused("auth", 401, "invalid_api_key");
            // one code for missing, malformed (e.g. Basic) and unknown keys, as docs/gateway.md says
            ApiErrors.write(
                    Protocol.OPENAI,
                    response,
                    401,
                    "invalid_request_error",
                    "invalid_api_key",
                    null,
                    "You didn't provide an API key. Send 'Authorization: Bearer <key>'.");
            return;
        }
        if (key == null && anthropic) {
            metrics.refused("auth", 401, "invalid_api_key");
            Anthropic.error(response, 401, "invalid x-api-key");
            return;
        }
        if (key == null) {
            response.setHeader("WWW-Authenticate", "Bearer error=\"invalid_token\"");
            metrics.refused("auth", 401, "invalid_api_key");
            ApiErrors.write(
                    Protocol.OPENAI,
                    response,
                    401,
                    "invalid_request_error",
                    "invalid_api_key",
                    null,
                    "Incorrect API key provided.");
            return;
        }
        Exchange.begin(request, config, new Account(key.tenant(), key.tier(), key.team(), key.budget()));
        // what RateLimitFilter's default resolver reads on the pass-through paths
        request.setAttribute(RateLimitFilter.USER_ATTRIBUTE, key.tenant());
        // the library's tier: a key in shadow is charged under a copy of its own, named apart
        request.setAttribute(
                RateLimitFilter.TIER_ATTRIBUTE, key.tier().requests().name());
        chain.doFilter(request, response);
    }

    private @Nullable ApiKey find(String presented, GatewayConfig config) {
        byte[] digest = GatewayConfig.sha256(presented);
        ApiKey found = null;
        for (ApiKey key : config.keys()) { // every key is compared, whatever matched
            if (MessageDigest.isEqual(key.sha256(), digest)) {
                found = key;
            }
        }
        // looked up by digest: what a lookup's time could tell is about the digest, not the secret
        return found != null ? found : managed.find(digest, config);
    }
}
