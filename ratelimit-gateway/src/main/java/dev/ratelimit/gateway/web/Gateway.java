package dev.ratelimit.gateway.web;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.admission.Charge;
import dev.ratelimit.gateway.admission.ShadowRefusals;
import dev.ratelimit.gateway.admission.Slots;
import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.metrics.GatewayMetrics;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.genai.ModelCall;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
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
 * @param geminiResponses the rate-limit headers and refusals of Google's Gemini API
 * @param metrics the gateway's meters
 * @param upstream the server behind the gateway
 * @param slots the concurrency slots
 * @param store what the budgets are kept in, for messages
 * @param draining set once a shutdown began: metered requests are then refused
 * @param shadowRefusals what shadow windows would have refused, by tenant and budget, for the status page
 */
public record Gateway(
        AtomicReference<GatewayConfig> configs,
        TokenCounter tokens,
        Admission admission,
        RateLimitResponses openAiResponses,
        RateLimitResponses anthropicResponses,
        RateLimitResponses geminiResponses,
        GatewayMetrics metrics,
        Upstream upstream,
        Slots slots,
        String store,
        AtomicBoolean draining,
        ShadowRefusals shadowRefusals) {

    /** How long a client refused during a shutdown waits before it retries (on another instance). */
    static final Duration DRAINING_RETRY = Duration.ofSeconds(1);

    /**
     * Returns the configuration in force now; a request reads it once and keeps it to the end.
     */
    public GatewayConfig config() {
        return Objects.requireNonNull(configs.get(), "configs holds a configuration from the start");
    }

    /**
     * Returns the metered endpoints' writer for one API, set before a response's first byte; both
     * report each unit from the tenant's window with the least remaining, the IETF draft's {@code
     * RateLimit-Policy} (every window of the tier) and {@code RateLimit} (that window per unit), and
     * on a 429 {@code Retry-After} and {@code retry-after-ms}. OpenAI's adds {@code
     * x-ratelimit-{limit,remaining,reset}-{requests,tokens}}, {@code x-ratelimit-window} and
     * OpenAI's error bodies; Anthropic's {@code anthropic-ratelimit-*} (resets counted on {@code
     * clock}) and Anthropic's error bodies; Gemini's no family of its own (Google's API sends no
     * rate-limit headers) and Google's error bodies, whose {@code RetryInfo} gives the delay to the
     * millisecond. No {@code X-RateLimit-*} family: the pass-through paths' {@code RateLimitFilter}
     * sends none either.
     *
     * @param clock the clock of Anthropic's reset times
     * @return the writer
     */
    public static RateLimitResponses meteredResponses(Protocol protocol, Clock clock) {
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
            case GEMINI -> responses.errorShape(ErrorShape.GEMINI).build();
        };
    }

    /** An admission answered without asking the limiter. */
    private static final CompletionStage<Admission.@Nullable Ticket> ANSWERED = CompletableFuture.completedFuture(null);

    /** Returns the metered endpoints' writer of {@code protocol}'s headers and bodies. */
    RateLimitResponses responses(Protocol protocol) {
        return switch (protocol) {
            case ANTHROPIC -> anthropicResponses;
            case GEMINI -> geminiResponses;
            case OPENAI -> openAiResponses;
        };
    }

    /**
     * Admits a request and sets its rate-limit headers, or answers it in the shape of the endpoint's
     * API: 429 naming the window that tripped and the level it belongs to (the tenant, its team or
     * organisation, a per-model limit, the upstream cap or a tier's share of it; OpenAI's {@code
     * insufficient_quota} for a spend window), 400 for a request larger than a window could ever hold
     * (with the gateway's estimate) or for a model without a price where a spend window applies, 503
     * when a fail-closed limiter ({@code limits.fail-open: false}) cannot reach its store, or 503
     * while the gateway shuts down. No thread waits for the store: the stage completes on one of
     * the server's threads once it has answered.
     *
     * @return a stage completed with the ticket to settle, or with {@code null} when the request was
     *     answered; exceptionally when answering failed (a ticket admitted by then is cancelled)
     */
    public CompletionStage<Admission.@Nullable Ticket> admit(
            HttpServletResponse response,
            Endpoint endpoint,
            Account account,
            Charge charge,
            Endpoint.Call call,
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
                    "The gateway is shutting down; retry, another instance will answer.",
                    DRAINING_RETRY);
            return ANSWERED;
        }
        ModelCall.Request request = charge.request(call.promptTokens(), call.maxOutputTokens());
        Window unpriced = request.unpricedSpend(account.tier().tier());
        if (unpriced != null) {
            // a model that cannot be charged in money is never let through free
            metrics.refused(metric, 400, "model_not_priced");
            ApiErrors.write(
                    endpoint.protocol(),
                    response,
                    400,
                    "invalid_request_error",
                    "model_not_priced",
                    "model",
                    "The model '" + charge.model() + "' has no price in the gateway's price table, and the spend"
                            + " window '" + unpriced.name() + "' applies to this key: it cannot be charged in money,"
                            + " so it is refused. Ask the gateway's operator to add it under prices:.");
            return ANSWERED;
        }
        Amounts estimate = request.amounts();
        return admission
                .admit(account.tier(), charge, request, endpoint.protocol(), endpoint.operation())
                .handle((ticket, failure) -> {
                    try {
                        return decided(response, endpoint, account, charge, call, logged, estimate, ticket, failure);
                    } catch (IOException | RuntimeException e) {
                        if (ticket != null) {
                            ticket.cancel("gateway_error"); // answering failed: nothing stays held
                        }
                        throw new CompletionException(e);
                    }
                });
    }

    /** What the limiter decided, answered: the headers of an admission, or the refusal. */
    private Admission.@Nullable Ticket decided(
            HttpServletResponse response,
            Endpoint endpoint,
            Account account,
            Charge charge,
            Endpoint.Call call,
            AccessLog.@Nullable Entry logged,
            Amounts estimate,
            Admission.@Nullable Ticket ticket,
            @Nullable Throwable failure)
            throws IOException {
        String metric = endpoint.metric();
        RateLimitResponses responses = responses(endpoint.protocol());
        Tier tier = account.tier().tier();
        if (failure != null) {
            Throwable cause =
                    failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            if (cause instanceof RateLimiterUnavailableException) {
                metrics.refused(metric, 503, "rate_limiter_unavailable");
                send(response, responses.unavailable(tier, response::setHeader));
                return null;
            }
            throw cause instanceof RuntimeException r ? r : new CompletionException(cause);
        }
        Admission.Ticket admitted = Objects.requireNonNull(ticket, "ticket");
        if (logged != null) {
            logged.ticket = admitted; // its decision and, once settled, its ending for the access log
        }
        return answered(response, endpoint, account, charge, call, estimate, admitted);
    }

    private Admission.@Nullable Ticket answered(
            HttpServletResponse response,
            Endpoint endpoint,
            Account account,
            Charge charge,
            Endpoint.Call call,
            Amounts estimate,
            Admission.Ticket ticket)
            throws IOException {
        String metric = endpoint.metric();
        RateLimitResponses responses = responses(endpoint.protocol());
        Tier tier = account.tier().tier();
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
            shadowRefusals.record(account.tenant(), decision);
            responses.allowed(tier, decision, response::setHeader); // X-RateLimit-Shadow among them
            return ticket;
        }
        String level = level(account, charge, decision);
        if (decision.tooLarge()) {
            metrics.refused(metric, 400, "request_too_large");
            boolean money = decision.window().unit().equals(Window.Unit.USD_MICROS);
            String message = RateLimitResponses.message(decision) + " " + level + " It "
                    + (money
                            ? "may cost up to $" + dollars(estimate.get(Window.Unit.USD_MICROS))
                                    + " (the prompt at the input price plus the most the answer may take at the"
                                    + " output price)"
                            : "needs an estimated " + call.estimate()
                                    + " tokens (the prompt plus the most the answer may take)")
                    + ": " + endpoint.tooLargeAdvice() + ".";
            send(response, responses.rejected(tier, decision, message, response::setHeader));
            return null;
        }
        Window.Unit unit = decision.window().unit();
        metrics.refused(metric, 429, unit.equals(Window.Unit.USD_MICROS) ? "insufficient_quota" : unit.name());
        String message = RateLimitResponses.message(decision) + " " + level;
        send(response, responses.rejected(tier, decision, message, response::setHeader));
        return null;
    }

    /** Names the level whose window refused: the tenant's own, or the budget of the charge it belongs to. */
    private static String level(Account account, Charge charge, Decision decision) {
        Charge.Level level = charge.level(decision.budget());
        if (level != null) {
            return "The budget is " + level.description() + ".";
        }
        return "The budget is that of tenant '" + account.tenant() + "' alone (tier "
                + account.tier().name() + ").";
    }

    /** Micro-dollars as dollars with at least two decimals, such as {@code 0.10} or {@code 0.012345}. */
    public static String dollars(long micros) {
        java.math.BigDecimal value = java.math.BigDecimal.valueOf(micros, 6).stripTrailingZeros();
        return value.scale() < 2 ? value.setScale(2).toPlainString() : value.toPlainString();
    }

    private static void send(HttpServletResponse response, Refusal refusal) throws IOException {
        OpenAi.write(response, refusal.status(), Refusal.CONTENT_TYPE, refusal.bytes());
    }

    /**
     * Routes a metered request, or answers it in the caller's API shape, uncharged: 404 for a model
     * no upstream serves, 429 with the upstream's retry time while the model cools down.
     *
     * @return the route, or {@code null} when the request was answered
     */
    public Upstream.@Nullable Route route(
            HttpServletResponse response, Protocol protocol, String model, String endpoint) throws IOException {
        Upstream.Routing routing = upstream().route(protocol, model);
        if (routing instanceof Upstream.Routed routed) {
            return routed.route();
        }
        if (routing instanceof Upstream.NotServed notServed) {
            metrics().refused(endpoint, 404, "model_not_found");
            String message = "The model '" + model + "' is not served by this gateway"
                    + (notServed.elsewhere() == null
                            ? "."
                            : " over this API; it is served over "
                                    + switch (notServed.elsewhere()) {
                                        case ANTHROPIC -> "Anthropic's Messages API (POST /v1/messages).";
                                        case GEMINI ->
                                            "Google's Gemini API (POST /v1beta/models/{model}:generateContent).";
                                        case OPENAI -> "OpenAI's API (POST /v1/chat/completions).";
                                    });
            ApiErrors.write(protocol, response, 404, "invalid_request_error", "model_not_found", "model", message);
            return null;
        }
        Upstream.Cooling cooling = (Upstream.Cooling) routing;
        metrics().refused(endpoint, 429, "upstream_cooldown");
        RetryAfter.write(cooling.retryAfter(), response::setHeader);
        long seconds = RetryAfter.seconds(cooling.retryAfter().isNegative() ? Duration.ZERO : cooling.retryAfter());
        String message = "The upstream '" + cooling.upstream() + "' asked the gateway to slow down for model '" + model
                + "'; nothing was charged; retry in " + seconds + (seconds == 1 ? " second." : " seconds.");
        ApiErrors.write(protocol, response, 429, "requests", "upstream_cooldown", null, message, cooling.retryAfter());
        return null;
    }
}
