package dev.ratelimit.gateway;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.Refusal;
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
 * @param responses the rate-limit headers and refusals of the metered endpoints
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
        RateLimitResponses responses,
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
     * Returns the metered endpoints' writer, set before a response's first byte: OpenAI's {@code
     * x-ratelimit-{limit,remaining,reset}-{requests,tokens}} (each unit from the tenant's window
     * with the least remaining), the IETF draft's {@code RateLimit-Policy} (every window of the
     * tier) and {@code RateLimit} (that window per unit), on a 429 {@code Retry-After}, {@code
     * retry-after-ms} and {@code x-ratelimit-window}, and OpenAI's error bodies. No {@code
     * X-RateLimit-*} family: the pass-through paths' {@code RateLimitFilter} sends none either.
     *
     * @return the writer
     */
    static RateLimitResponses meteredResponses() {
        return RateLimitResponses.builder()
                .header(HeaderFamily.X_RATELIMIT, false)
                .header(HeaderFamily.OPENAI, true)
                .openAiErrors(true)
                .eachUnit(true)
                .build();
    }

    /**
     * Admits a request and sets its rate-limit headers, or answers it: 429 with OpenAI's error body
     * naming the window that tripped, 400 for a request larger than a token window could ever hold,
     * or 503 when a fail-closed limiter ({@code limits.fail-open: false}) cannot reach its store.
     *
     * @return the ticket to settle, or {@code null} when the request was answered
     */
    Admission.@Nullable Ticket admit(
            HttpServletResponse response,
            String endpoint,
            ApiKeyFilter.Account account,
            @Nullable ModelCap cap,
            long estimatedTokens,
            AccessLog.@Nullable Entry logged)
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
        Tier tier = account.tier().tier();
        Admission.Ticket ticket;
        try {
            ticket = admission.admit(account.tenant(), account.tier(), cap, estimatedTokens);
            if (logged != null) {
                logged.ticket = ticket; // its decision and, once settled, its ending for the access log
            }
        } catch (RateLimiterUnavailableException e) {
            metrics.refused(endpoint, 503, "rate_limiter_unavailable");
            send(response, responses.unavailable(tier, response::setHeader));
            return null;
        }
        Decision decision = ticket.decision();
        if (decision == null) {
            metrics.refused(endpoint, 429, "concurrency");
            send(
                    response,
                    responses.concurrencyLimited(
                            tier,
                            ticket.windows(),
                            account.tier().maxConcurrent(),
                            Admission.CONCURRENCY_RETRY,
                            response::setHeader));
            return null;
        }
        if (ticket.allowed()) {
            responses.allowed(tier, decision, response::setHeader);
            return ticket;
        }
        if (decision.tooLarge()) {
            metrics.refused(endpoint, 400, "request_too_large");
            String message = Rejection.tooLargeMessage(decision, estimatedTokens);
            send(response, responses.rejected(tier, decision, message, response::setHeader));
            return null;
        }
        metrics.refused(endpoint, 429, Rejection.unit(decision));
        send(response, responses.rejected(tier, decision, Rejection.message(decision), response::setHeader));
        return null;
    }

    private static void send(HttpServletResponse response, Refusal refusal) throws IOException {
        OpenAi.write(response, refusal.status(), Refusal.CONTENT_TYPE, refusal.bytes());
    }
}
