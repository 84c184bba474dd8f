package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;

/**
 * One token-metered endpoint ({@link Endpoint}: OpenAI's chat completions, legacy completions,
 * embeddings and responses, and Anthropic's messages, plain and streamed): validate, estimate the
 * tokens, route by model, admit against the tenant's budgets and the model's upstream cap, forward,
 * and settle the admission exactly once by how the response ended, answering in the shape of the
 * endpoint's API. Another method on the endpoint's path is a 404, charged nothing: {@code GET
 * /v1/chat/completions} (stored completions) is neither metered nor relayed.
 *
 * <table>
 *   <caption>How each ending settles</caption>
 *   <tr><th>ending</th><th>settlement</th></tr>
 *   <tr><td>upstream 2xx, plain</td><td>commit the upstream's {@code usage} (or the counted tokens)</td></tr>
 *   <tr><td>stream finished</td><td>commit the usage the stream reported</td></tr>
 *   <tr><td>stream ended by an error event ({@link SseRelay.Events#failed})</td><td>commit what was produced; cancel if nothing was</td></tr>
 *   <tr><td>client disconnects mid-stream</td><td>commit the prompt and the completion tokens relayed so far</td></tr>
 *   <tr><td>stream breaks off (reset, idle timeout)</td><td>commit what was relayed; cancel if nothing was</td></tr>
 *   <tr><td>upstream 429 (or Anthropic's 529)</td><td>cancel; its {@code Retry-After} is passed on</td></tr>
 *   <tr><td>upstream 4xx/5xx, timeout, unreachable</td><td>cancel</td></tr>
 * </table>
 */
final class MeteredServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private final transient Endpoint endpoint;
    private final transient Gateway gateway;

    MeteredServlet(Endpoint endpoint, Gateway gateway) {
        this.endpoint = endpoint;
        this.gateway = gateway;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!request.getMethod().equals("POST")) {
            // GET /v1/chat/completions (stored completions) and the like: neither metered nor relayed
            PassthroughServlet.unknown(gateway, request, response, request.getServletPath());
            return;
        }
        ApiKeyFilter.Account account = ApiKeyFilter.account(request);
        GatewayConfig config = gateway.config();
        Endpoint.Call call;
        try {
            ObjectNode body = Requests.read(request, config.limits().maxBodyBytes());
            if (endpoint.answersItself(request, response, body)) {
                return; // such as Anthropic's count_tokens: the gateway's estimate, charged nothing
            }
            call = endpoint.parse(body, config.limits(), gateway.tokens());
        } catch (BadRequest e) {
            e.answer(endpoint.protocol(), endpoint.metric(), gateway.metrics(), response);
            return;
        }

        Charge charge = Charge.of(config, account, call.model());
        AccessLog.Entry logged = AccessLog.entry(request);
        if (logged != null) {
            logged.model = call.model();
            logged.estimatedTokens = call.estimate();
        }
        Upstream.Route route = Upstream.open(gateway, response, endpoint.protocol(), call.model(), endpoint.metric());
        if (route == null) {
            return; // answered: 404 (no upstream serves the model) or 429 (the upstream's cooldown), uncharged
        }
        Admission.Ticket ticket = gateway.admit(response, endpoint, account, charge, call, logged);
        if (ticket == null) {
            return; // answered: 429, 400 or 503
        }
        try {
            forward(request, response, call, ticket, route);
        } finally {
            ticket.cancel("gateway_error"); // a settled ticket ignores this: it only catches what escaped above
        }
    }

    private void forward(
            HttpServletRequest request,
            HttpServletResponse response,
            Endpoint.Call call,
            Admission.Ticket ticket,
            Upstream.Route route)
            throws IOException {
        long started = System.nanoTime();
        Upstream.Exchange exchange;
        try {
            exchange = route.send(
                    "POST",
                    endpoint.upstreamPath(),
                    "application/json",
                    OpenAi.JSON.writeValueAsBytes(call.body()),
                    endpoint.upstreamHeaders(request));
        } catch (Upstream.Failure e) {
            ticket.cancel(e.ending());
            e.answer(endpoint.protocol(), response);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ticket.cancel("upstream_unreachable");
            return;
        }
        gateway.metrics().upstreamHeaders(endpoint.metric(), Duration.ofNanos(System.nanoTime() - started));
        int status = exchange.status();
        AccessLog.Entry logged = AccessLog.entry(request);
        if (logged != null) {
            logged.upstreamStatus = status;
        }
        if (status < 200 || status > 299) {
            relayRefusal(response, exchange, ticket);
        } else if (call.stream() && exchange.isEventStream()) {
            relayStream(response, exchange, call, ticket);
        } else {
            relayPlain(response, exchange, call, ticket);
        }
    }

    /** Any non-2xx answer: the upstream did no billable work, so the admission is given back. */
    private void relayRefusal(HttpServletResponse response, Upstream.Exchange exchange, Admission.Ticket ticket)
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
            // the gateway's own upstream key was refused: not the client's fault, nor its key
            ApiErrors.write(
                    endpoint.protocol(),
                    response,
                    502,
                    "upstream_error",
                    "upstream_auth_failed",
                    null,
                    "The upstream refused the gateway's credentials (HTTP " + status
                            + "); check UPSTREAM_API_KEY or the upstream's api-key.");
            return;
        }
        exchange.relay(response, bytes);
    }

    private void relayPlain(
            HttpServletResponse response, Upstream.Exchange exchange, Endpoint.Call call, Admission.Ticket ticket)
            throws IOException {
        byte[] bytes;
        try {
            bytes = exchange.readAll();
        } catch (IOException e) {
            ticket.cancel("upstream_unreachable");
            ApiErrors.write(
                    endpoint.protocol(),
                    response,
                    502,
                    "upstream_error",
                    "upstream_broken",
                    null,
                    "The upstream's response broke off: " + e.getMessage());
            return;
        }
        ticket.commit(plainUsage(bytes, call), "completed");
        exchange.relay(response, bytes); // a client gone by now was charged all the same: the work is done
    }

    private void relayStream(
            HttpServletResponse response, Upstream.Exchange exchange, Endpoint.Call call, Admission.Ticket ticket)
            throws IOException {
        response.setStatus(exchange.status());
        Upstream.copyHeaders(exchange, response);
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        SseRelay.Events events = endpoint.events(call, gateway.tokens());
        SseRelay relay = new SseRelay(events);
        ServletOutputStream out = response.getOutputStream();
        SseRelay.Ending ending;
        try {
            response.flushBuffer(); // status and headers now, before the first event
            ending = relay.relay(exchange.body(), out);
        } catch (IOException e) {
            ending = SseRelay.Ending.CLIENT_GONE;
        }
        TokenUsage used = events.used(call.promptTokens());
        switch (ending) {
            case COMPLETED -> {
                if (events.failed() && events.nothing()) {
                    ticket.cancel(events.ending());
                } else {
                    ticket.commit(used, events.ending());
                }
            }
            case CLIENT_GONE -> {
                exchange.abort();
                ticket.commit(used, "client_disconnected");
            }
            case BROKEN -> {
                exchange.abort();
                if (events.nothing()) {
                    ticket.cancel("stream_broken");
                } else {
                    ticket.commit(used, "stream_broken");
                }
                relay.writeBrokenNotice(out);
            }
        }
    }

    /** The upstream's usage, or failing that the prompt estimate plus the answer's counted tokens. */
    private TokenUsage plainUsage(byte[] bytes, Endpoint.Call call) {
        try {
            return endpoint.plainUsage(OpenAi.JSON.readTree(bytes), call, gateway.tokens());
        } catch (IOException e) { // not JSON after all: the prompt was still read
            return TokenUsage.of(call.promptTokens(), 0);
        }
    }
}
