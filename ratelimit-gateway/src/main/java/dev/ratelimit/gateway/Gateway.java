package dev.ratelimit.gateway;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.UpstreamConfig.Protocol;
import dev.ratelimit.http.ErrorShape;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.Refusal;
import dev.ratelimit.http.RetryAfter;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
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
 * @param openAiResponses the rate-limit headers and refusals of OpenAI's metered endpoints
 * @param anthropicResponses the rate-limit headers and refusals of Anthropic's Messages API
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
        RateLimitResponses openAiResponses,
        RateLimitResponses anthropicResponses,
        GatewayMetrics metrics,
        Upstream upstream,
        Slots slots,
        String store,
        AtomicBoolean draining) {

    /** How long a client refused during a shutdown waits before it retries (on another instance). */
    static final Duration DRAINING_RETRY = Duration.ofSeconds(1);

    /**
     * Returns the configuration in force now; a request reads it once and keeps it to the end.
     */
    GatewayConfig config() {
        return Objects.requireNonNull(configs.get(), "configs holds a configuration from the start");
    }

    /**
     * Returns the metered endpoints' writer for one API, set before a response's first byte; both
     * report each unit from the tenant's window with the least remaining, the IETF draft's {@code
     * RateLimit-Policy} (every window of the tier) and {@code RateLimit} (that window per unit), and
     * on a 429 {@code Retry-After} and {@code retry-after-ms}. OpenAI's adds {@code
     * x-ratelimit-{limit,remaining,reset}-{requests,tokens}}, {@code x-ratelimit-window} and
     * OpenAI's error bodies; Anthropic's {@code anthropic-ratelimit-*} (resets counted on {@code
     * clock}) and Anthropic's error bodies. No {@code X-RateLimit-*} family: the pass-through paths'
     * {@code RateLimitFilter} sends none either.
     *
     * @param clock the clock of Anthropic's reset times
     * @return the writer
     */
    static RateLimitResponses meteredResponses(Protocol protocol, Clock clock) {
        RateLimitResponses.Builder responses = RateLimitResponses.builder()
                .header(HeaderFamily.X_RATELIMIT, false)
                .eachUnit(true);
        return switch (protocol) {
            case OPENAI ->
                responses
                        .header(HeaderFamily.OPENAI, true)
                        .errorShape(ErrorShape.OPENAI)
                        .build();
            case ANTHROPIC ->
                responses
                        .header(HeaderFamily.ANTHROPIC, true)
                        .clock(clock)
                        .errorShape(ErrorShape.ANTHROPIC)
                        .build();
        };
    }

    /** Returns the metered endpoints' writer of {@code protocol}'s headers and bodies. */
    RateLimitResponses responses(Protocol protocol) {
        return protocol == Protocol.ANTHROPIC ? anthropicResponses : openAiResponses;
    }

    /**
     * Admits a request and sets its rate-limit headers, or answers it in the shape of the endpoint's
     * API: 429 naming the window that tripped (the library's message), 400 for a request larger than
     * a token window could ever hold (with the gateway's estimate), 503 when a fail-closed limiter
     * ({@code limits.fail-open: false}) cannot reach its store, or 503 while the gateway shuts down.
     *
     * @return the ticket to settle, or {@code null} when the request was answered
     */
    Admission.@Nullable Ticket admit(
            HttpServletResponse response,
            Endpoint endpoint,
            ApiKeyFilter.Account account,
            @Nullable ModelCap cap,
            long estimatedTokens,
            AccessLog.@Nullable Entry logged)
            throws IOException {
        String metric = endpoint.metric();
        if (draining.get()) {
            // a request on a connection kept alive from before the shutdown: no new work now
            response.setHeader("Connection", "close");
            RetryAfter.write(DRAINING_RETRY, response::setHeader);
            metrics.refused(metric, 503, "server_shutting_down");
            ApiErrors.write(
                    endpoint.protocol(),
                    response,
                    503,
                    "server_error",
                    "server_shutting_down",
                    null,
                    "The gateway is shutting down; retry, another instance will answer.");
            return null;
        }
        RateLimitResponses responses = responses(endpoint.protocol());
        Tier tier = account.tier().tier();
        Admission.Ticket ticket;
        try {
            ticket = admission.admit(account.tenant(), account.tier(), cap, estimatedTokens);
            if (logged != null) {
                logged.ticket = ticket; // its decision and, once settled, its ending for the access log
            }
        } catch (RateLimiterUnavailableException e) {
            metrics.refused(metric, 503, "rate_limiter_unavailable");
            send(response, responses.unavailable(tier, response::setHeader));
            return null;
        }
        Decision decision = ticket.decision();
        if (decision == null) {
            metrics.refused(metric, 429, "concurrency");
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
            metrics.refused(metric, 400, "request_too_large");
            String message = RateLimitResponses.message(decision) + " It needs an estimated " + estimatedTokens
                    + " tokens (the prompt plus the most the answer may take): " + endpoint.tooLargeAdvice() + ".";
            send(response, responses.rejected(tier, decision, message, response::setHeader));
            return null;
        }
        metrics.refused(metric, 429, decision.window().isTokens() ? "tokens" : "requests");
        send(response, responses.rejected(tier, decision, response::setHeader));
        return null;
    }

    private static void send(HttpServletResponse response, Refusal refusal) throws IOException {
        OpenAi.write(response, refusal.status(), Refusal.CONTENT_TYPE, refusal.bytes());
    }
}
