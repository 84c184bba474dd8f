package dev.ratelimit.demo;

import dev.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;

/**
 * The demo's authentication layer: maps {@code Authorization: Bearer <key>} to a user and a tier
 * and hands both to the {@link RateLimitFilter} through request attributes; any other request gets
 * an OpenAI-shaped 401.
 */
final class ApiKeyFilter implements Filter {

    /** An API key's owner. */
    record Account(String user, String tier) {}

    static final Map<String, Account> DEMO_KEYS = Map.of(
            "demo-free", new Account("demo-user-free", "free"),
            "demo-pro", new Account("demo-user-pro", "pro"),
            "demo-enterprise", new Account("demo-user-enterprise", "enterprise"));

    private static final String BEARER = "bearer ";

    private final Map<String, Account> keys;

    ApiKeyFilter(Map<String, Account> keys) {
        this.keys = Map.copyOf(keys);
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        HttpServletResponse response = (HttpServletResponse) res;
        String header = request.getHeader("Authorization");
        if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
            response.setHeader("WWW-Authenticate", "Bearer");
            Responses.error(
                    response,
                    401,
                    "invalid_request_error",
                    "missing_api_key",
                    "You didn't provide an API key. Send 'Authorization: Bearer demo-free' (or demo-pro,"
                            + " demo-enterprise).");
            return;
        }
        Account account = keys.get(header.substring(BEARER.length()).trim());
        if (account == null) {
            response.setHeader("WWW-Authenticate", "Bearer error=\"invalid_token\"");
            Responses.error(
                    response,
                    401,
                    "invalid_request_error",
                    "invalid_api_key",
                    "Incorrect API key provided. The demo knows demo-free, demo-pro and demo-enterprise.");
            return;
        }
        request.setAttribute(RateLimitFilter.USER_ATTRIBUTE, account.user());
        request.setAttribute(RateLimitFilter.TIER_ATTRIBUTE, account.tier());
        chain.doFilter(request, response);
    }
}
