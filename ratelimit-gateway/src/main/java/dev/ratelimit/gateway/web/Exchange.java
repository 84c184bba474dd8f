package dev.ratelimit.gateway.web;

import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What one request on the API listener carries through the gateway, taken once when its key is
 * checked ({@link ApiKeyFilter}): the configuration in force then (its tier, caps and prices, whatever
 * a reload swaps meanwhile), the caller the key names, and its access-log entry for the servlets to
 * fill in. Everything downstream reads these from here, never again from their sources.
 */
public final class Exchange {

    private static final String ATTRIBUTE = Exchange.class.getName();

    private final GatewayConfig config;
    private final Account account;
    private final AccessLog.@Nullable Entry log;

    private Exchange(GatewayConfig config, Account account, AccessLog.@Nullable Entry log) {
        this.config = config;
        this.account = account;
        this.log = log;
    }

    /** Takes the request's context once, when its key named {@code account} under {@code config}. */
    static Exchange begin(HttpServletRequest request, GatewayConfig config, Account account) {
        Exchange exchange = new Exchange(config, account, AccessLog.entry(request));
        request.setAttribute(ATTRIBUTE, exchange);
        return exchange;
    }

    /**
     * The context of a request whose key was accepted.
     *
     * @throws IllegalStateException when the request did not pass {@link ApiKeyFilter}
     */
    public static Exchange of(HttpServletRequest request) {
        Exchange exchange = find(request);
        if (exchange == null) {
            throw new IllegalStateException("the request did not pass the API key filter");
        }
        return exchange;
    }

    /** The context of a request, or {@code null} when its key was not accepted (or not checked). */
    static @Nullable Exchange find(HttpServletRequest request) {
        return request.getAttribute(ATTRIBUTE) instanceof Exchange exchange ? exchange : null;
    }

    /** The configuration the request is served by. */
    public GatewayConfig config() {
        return config;
    }

    /** The caller: tenant, tier, team and a managed key's own windows. */
    public Account account() {
        return account;
    }

    /** The request's access-log entry; {@code null} when the access log is off. */
    public AccessLog.@Nullable Entry log() {
        return log;
    }

    @Override
    public String toString() {
        return "Exchange[" + Objects.toString(account.tenant()) + "]";
    }
}
