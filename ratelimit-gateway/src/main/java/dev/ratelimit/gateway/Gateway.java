package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * The parts a request passes through, shared by the servlets.
 *
 * @param configs the validated configuration in force, swapped whole by a reload
 * @param tokens the token counter
 * @param admission the doorway to the limiter and the concurrency slots
 * @param headers the rate-limit header writer
 * @param metrics the gateway's meters
 * @param upstream the server behind the gateway
 * @param slots the concurrency slots
 * @param store what the budgets are kept in, for messages
 * @param draining set once a shutdown began: metered requests are then refused
 */
record Gateway(
        AtomicReference<GatewayConfig> configs,
        TokenCounter tokens,
        Admission admission,
        RateLimitHeaders headers,
        GatewayMetrics metrics,
        Upstream upstream,
        Slots slots,
        String store,
        AtomicBoolean draining) {

    /**
     * Returns the configuration in force now; a request reads it once and keeps it to the end.
     */
    GatewayConfig config() {
        return Objects.requireNonNull(configs.get(), "configs holds a configuration from the start");
    }

    /**
     * Admits a request and sets its rate-limit headers, or answers it: 429 with OpenAI's error body
     * naming the window that tripped, 400 for a request larger than a token window could ever hold,
     * or 503 when a fail-closed limiter cannot reach its store.
     *
     * @return the ticket to settle, or {@code null} when the request was answered
     */
    Admission.@Nullable Ticket admit(
            HttpServletResponse response,
            String endpoint,
            ApiKeyFilter.Account account,
            @Nullable ModelCap cap,
            long estimatedTokens)
            throws IOException {
        if (draining.get()) {
            // a request on a connection kept alive from before the shutdown: no new work now
            response.setHeader("Connection", "close");
            response.setHeader("Retry-After", "1");
            metrics.refused(endpoint, 503, "server_shutting_down");
            OpenAi.error(
                    response,
                    503,
                    "server_error",
                    "server_shutting_down",
                    null,
                    "The gateway is shutting down; retry, another instance will answer.");
            return null;
        }
        Admission.Ticket ticket;
        try {
            ticket = admission.admit(account.tenant(), account.tier(), cap, estimatedTokens);
        } catch (RateLimiterUnavailableException e) {
            response.setHeader("Retry-After", "5");
            metrics.refused(endpoint, 503, "rate_limiter_unavailable");
            OpenAi.error(
                    response,
                    503,
                    "server_error",
                    "rate_limiter_unavailable",
                    null,
                    "The rate limiter cannot reach its store and refuses requests until it can; retry in 5 seconds.");
            return null;
        }
        headers.write(response, account.tier().tier(), ticket);
        Rejection rejection = ticket.rejection();
        if (rejection == null) {
            return ticket;
        }
        if (rejection.tooLarge()) {
            metrics.refused(endpoint, 400, "request_too_large");
            ObjectNode error = OpenAi.errorBody(
                    "invalid_request_error",
                    "request_too_large",
                    null,
                    rejection.tooLargeMessage(ticket.estimatedTokens()));
            ((ObjectNode) error.get("error")).put("window", rejection.window());
            OpenAi.json(response, 400, error);
            return null;
        }
        boolean concurrency = rejection.unit().equals(Rejection.CONCURRENCY);
        metrics.refused(endpoint, 429, rejection.unit());
        ObjectNode error = OpenAi.errorBody(
                concurrency ? "requests" : rejection.unit(),
                concurrency ? "concurrency_limit_exceeded" : "rate_limit_exceeded",
                null,
                rejection.message());
        ((ObjectNode) error.get("error")).put("window", rejection.window());
        OpenAi.json(response, 429, error);
        return null;
    }
}
