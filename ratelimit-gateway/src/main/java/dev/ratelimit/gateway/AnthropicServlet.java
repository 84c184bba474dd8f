package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Tier;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import dev.ratelimit.gateway.UpstreamConfig.Protocol;
import dev.ratelimit.http.HeaderFamily;
import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.Refusal;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Anthropic's Messages API: {@code POST /v1/messages} (plain and streamed), metered like chat
 * completions, and {@code POST /v1/messages/count_tokens}, answered by the gateway's own estimate.
 * Validate, estimate ({@link AnthropicTokens} plus {@code max_tokens}), route by model, admit,
 * forward with {@code anthropic-version} and {@code anthropic-beta}, and settle exactly once by how
 * the response ended; every answer and refusal is in Anthropic's shape, with its {@code
 * anthropic-ratelimit-*} headers.
 *
 * <table>
 *   <caption>How each ending settles</caption>
 *   <tr><th>ending</th><th>settlement</th></tr>
 *   <tr><td>upstream 2xx, plain</td><td>commit {@code usage}: input, cache writes and reads, output</td></tr>
 *   <tr><td>{@code message_stop}</td><td>commit {@code message_start}'s input and the last {@code message_delta}'s output</td></tr>
 *   <tr><td>{@code error} event</td><td>commit the input and what was produced; cancel if nothing was</td></tr>
 *   <tr><td>client disconnects</td><td>commit the input and what was produced</td></tr>
 *   <tr><td>stream breaks off</td><td>commit the input and what was produced; cancel if nothing was</td></tr>
 *   <tr><td>upstream 429, 529, 4xx, 5xx, timeout</td><td>cancel (429 and 529 passed on, with their retry time)</td></tr>
 * </table>
 */
final class AnthropicServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final String ENDPOINT = "messages";

    private final transient Gateway gateway;
    private final transient AnthropicTokens tokens;
    private final transient RateLimitResponses responses;

    AnthropicServlet(Gateway gateway, AnthropicTokens tokens, Clock clock) {
        this.gateway = gateway;
        this.tokens = tokens;
        this.responses = responses(clock);
    }

    /**
     * Anthropic's header family ({@code anthropic-ratelimit-*}, resets counted on {@code clock}),
     * the IETF draft's, each unit's tightest window, and {@code retry-after-ms} on a 429.
     */
    static RateLimitResponses responses(Clock clock) {
        return RateLimitResponses.builder()
                .header(HeaderFamily.X_RATELIMIT, false)
                .header(HeaderFamily.ANTHROPIC, true)
                .eachUnit(true)
                .clock(clock)
                .build();
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        boolean countTokens = Anthropic.COUNT_TOKENS.equals(request.getRequestURI());
        if (!request.getMethod().equals("POST")) {
            response.setHeader("Allow", "POST");
            Anthropic.error(response, 405, "Use POST for " + request.getRequestURI() + ".");
            return;
        }
        ApiKeyFilter.Account account = ApiKeyFilter.account(request);
        GatewayConfig config = gateway.config();
        AnthropicRequests.Messages messages;
        long prompt;
        try {
            ObjectNode body = Requests.read(request, config.limits().maxBodyBytes());
            messages = AnthropicRequests.messages(body, !countTokens);
            prompt = tokens.prompt(body);
        } catch (BadRequest e) {
            gateway.metrics().refused(ENDPOINT, e.status, e.code);
            Anthropic.error(response, e.status, String.valueOf(e.getMessage()));
            return;
        }
        if (countTokens) {
            // the gateway's own estimate, the figure it reserves: no upstream call, nothing charged
            OpenAi.json(response, 200, OpenAi.JSON.createObjectNode().put("input_tokens", prompt));
            return;
        }
        String model = messages.model();
        long estimate = prompt + messages.maxTokens();
        AccessLog.Entry logged = AccessLog.entry(request);
        if (logged != null) {
            logged.model = model;
            logged.estimatedTokens = estimate;
        }
        Upstream.Route route = Upstream.open(gateway, response, Protocol.ANTHROPIC, model, ENDPOINT);
        if (route == null) {
            return; // answered: 404 or the cooldown's 429
        }
        Admission.Ticket ticket = admit(response, account, config.capOf(model), estimate, logged);
        if (ticket == null) {
            return;
        }
        try {
            forward(request, response, messages, route, prompt, ticket);
        } finally {
            ticket.cancel("gateway_error"); // a settled ticket ignores this
        }
    }

    /** {@link Gateway#admit} in Anthropic's shape: its headers, and refusals as its error bodies. */
    private Admission.@Nullable Ticket admit(
            HttpServletResponse response,
            ApiKeyFilter.Account account,
            @Nullable ModelCap cap,
            long estimate,
            AccessLog.@Nullable Entry logged)
            throws IOException {
        if (gateway.draining().get()) {
            response.setHeader("Connection", "close");
            response.setHeader("Retry-After", "1");
            gateway.metrics().refused(ENDPOINT, 503, "server_shutting_down");
            Anthropic.error(response, 503, "The gateway is shutting down; retry, another instance will answer.");
            return null;
        }
        Tier tier = account.tier().tier();
        Admission.Ticket ticket;
        try {
            ticket = gateway.admission().admit(account.tenant(), account.tier(), cap, estimate);
            if (logged != null) {
                logged.ticket = ticket;
            }
        } catch (RateLimiterUnavailableException e) {
            gateway.metrics().refused(ENDPOINT, 503, "rate_limiter_unavailable");
            Refusal refusal = responses.unavailable(tier, response::setHeader);
            Anthropic.error(response, refusal.status(), "The rate limiter cannot reach its store; retry shortly.");
            return null;
        }
        Decision decision = ticket.decision();
        if (decision == null) {
            gateway.metrics().refused(ENDPOINT, 429, "concurrency");
            responses.concurrencyLimited(
                    tier,
                    ticket.windows(),
                    account.tier().maxConcurrent(),
                    Admission.CONCURRENCY_RETRY,
                    response::setHeader);
            Anthropic.error(
                    response,
                    429,
                    "Too many concurrent requests: the limit of "
                            + account.tier().maxConcurrent() + " requests in flight is reached; retry in 1 second.");
            return null;
        }
        if (ticket.allowed()) {
            responses.allowed(tier, decision, response::setHeader);
            return ticket;
        }
        Refusal refusal = responses.rejected(tier, decision, response::setHeader);
        if (decision.tooLarge()) {
            gateway.metrics().refused(ENDPOINT, 400, "request_too_large");
            Anthropic.error(
                    response,
                    refusal.status(),
                    Rejection.tooLargeMessage(decision, estimate)
                            .replace("max_completion_tokens (or max_tokens)", "max_tokens"));
            return null;
        }
        gateway.metrics().refused(ENDPOINT, 429, Rejection.unit(decision));
        Anthropic.error(response, refusal.status(), Rejection.message(decision));
        return null;
    }

    private void forward(
            HttpServletRequest request,
            HttpServletResponse response,
            AnthropicRequests.Messages messages,
            Upstream.Route route,
            long prompt,
            Admission.Ticket ticket)
            throws IOException {
        Map<String, String> headers = new LinkedHashMap<>();
        String version = request.getHeader("anthropic-version");
        headers.put("anthropic-version", version == null || version.isBlank() ? Anthropic.DEFAULT_VERSION : version);
        String beta = request.getHeader("anthropic-beta");
        if (beta != null && !beta.isBlank()) {
            headers.put("anthropic-beta", beta);
        }
        long started = System.nanoTime();
        Upstream.Exchange exchange;
        try {
            exchange = route.send(
                    "POST", "/messages", "application/json", OpenAi.JSON.writeValueAsBytes(messages.body()), headers);
        } catch (Upstream.Failure e) {
            ticket.cancel(e.ending());
            Anthropic.error(response, e.timeout ? 504 : 502, String.valueOf(e.getMessage()));
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ticket.cancel("upstream_unreachable");
            return;
        }
        gateway.metrics().upstreamHeaders(ENDPOINT, Duration.ofNanos(System.nanoTime() - started));
        int status = exchange.status();
        AccessLog.Entry logged = AccessLog.entry(request);
        if (logged != null) {
            logged.upstreamStatus = status;
        }
        if (status < 200 || status > 299) {
            relayRefusal(response, exchange, ticket);
        } else if (messages.stream() && exchange.isEventStream()) {
            relayStream(response, exchange, prompt, ticket);
        } else {
            relayPlain(response, exchange, prompt, ticket);
        }
    }

    /** Any non-2xx answer: nothing billable was done, so the admission is given back. */
    private static void relayRefusal(HttpServletResponse response, Upstream.Exchange exchange, Admission.Ticket ticket)
            throws IOException {
        int status = exchange.status();
        ticket.cancel(status == 429 ? "upstream_429" : status == 529 ? "upstream_529" : "upstream_error");
        byte[] bytes;
        try {
            bytes = exchange.readAll();
        } catch (IOException e) {
            bytes = new byte[0];
        }
        if (status == 401 || status == 403) {
            Anthropic.error(
                    response,
                    502,
                    "The upstream refused the gateway's credentials (HTTP " + status
                            + "); check the upstream's api-key.");
            return;
        }
        exchange.relay(response, bytes);
    }

    private void relayPlain(
            HttpServletResponse response, Upstream.Exchange exchange, long prompt, Admission.Ticket ticket)
            throws IOException {
        byte[] bytes;
        try {
            bytes = exchange.readAll();
        } catch (IOException e) {
            ticket.cancel("upstream_unreachable");
            Anthropic.error(response, 502, "The upstream's response broke off: " + e.getMessage());
            return;
        }
        ticket.commit(plainTokens(bytes, prompt), "completed");
        exchange.relay(response, bytes);
    }

    /** The answer's {@code usage}, or failing that the prompt estimate and the answer's counted text. */
    private long plainTokens(byte[] bytes, long prompt) {
        try {
            JsonNode answer = OpenAi.JSON.readTree(bytes);
            JsonNode usage = answer.get("usage");
            if (usage != null && usage.isObject()) {
                return AnthropicSseRelay.inputOf(usage)
                        + Math.max(0, usage.path("output_tokens").asLong(0));
            }
            return prompt + tokens.content(answer.get("content"));
        } catch (IOException e) {
            return prompt;
        }
    }

    private void relayStream(
            HttpServletResponse response, Upstream.Exchange exchange, long prompt, Admission.Ticket ticket)
            throws IOException {
        response.setStatus(exchange.status());
        Upstream.copyHeaders(exchange, response);
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        AnthropicSseRelay relay = new AnthropicSseRelay();
        ServletOutputStream out = response.getOutputStream();
        AnthropicSseRelay.Ending ending;
        try {
            response.flushBuffer(); // status and headers now, before the first event
            ending = relay.relay(exchange.body(), out);
        } catch (IOException e) {
            ending = AnthropicSseRelay.Ending.CLIENT_GONE;
        }
        long input = relay.input() >= 0 ? relay.input() : prompt;
        long output = Math.max(relay.output(), tokens.text(relay.produced()));
        boolean nothing = relay.produced().isEmpty();
        switch (ending) {
            case COMPLETED -> ticket.commit(input + relay.output(), "stream_completed");
            case ERROR -> {
                if (nothing) {
                    ticket.cancel("stream_error");
                } else {
                    ticket.commit(input + output, "stream_error");
                }
            }
            case CLIENT_GONE -> {
                exchange.abort();
                ticket.commit(input + output, "client_disconnected");
            }
            case BROKEN -> {
                exchange.abort();
                if (nothing) {
                    ticket.cancel("stream_broken");
                } else {
                    ticket.commit(input + output, "stream_broken");
                }
                relay.writeBrokenNotice(out);
            }
        }
    }
}
