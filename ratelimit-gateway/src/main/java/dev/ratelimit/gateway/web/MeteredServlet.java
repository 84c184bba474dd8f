package dev.ratelimit.gateway.web;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.admission.Charge;
import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.SseRelay;
import dev.ratelimit.gateway.protocol.StreamFraming;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.Requests;
import dev.ratelimit.gateway.upstream.AsyncClient;
import dev.ratelimit.gateway.upstream.Relay;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.genai.TokenUsage;
import dev.ratelimit.http.RetryAfter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * One token-metered endpoint ({@link Endpoint}: OpenAI's chat completions, legacy completions,
 * embeddings and responses, Anthropic's messages, and Gemini's generateContent, plain and streamed): validate, estimate the
 * tokens, route by model, admit against the tenant's budgets and the model's upstream cap, forward,
 * and settle the admission exactly once by how the response ended, answering in the shape of the
 * endpoint's API. Another method on the endpoint's path is a 404, charged nothing: {@code GET
 * /v1/chat/completions} (stored completions) is neither metered nor relayed.
 *
 * <p>No thread waits for anything here: the servlet starts an asynchronous answer, the body is read
 * as it arrives, the upstream is called without waiting ({@link Upstream.Answer}), and the answer is
 * relayed by a {@link Relay}; only the store calls (admission and settlement, bounded by {@code
 * limits.store-timeout-ms}) are made on the thread that reached them.
 *
 * <table>
 *   <caption>How each ending settles</caption>
 *   <tr><th>ending</th><th>settlement</th></tr>
 *   <tr><td>upstream 2xx, plain</td><td>commit the upstream's {@code usage} (or the counted tokens)</td></tr>
 *   <tr><td>stream finished</td><td>commit the usage the stream reported</td></tr>
 *   <tr><td>stream ended by an error event ({@link SseRelay.Events#failed})</td><td>commit what was produced; cancel if nothing was</td></tr>
 *   <tr><td>client disconnects mid-stream</td><td>commit the prompt and the completion tokens read so far</td></tr>
 *   <tr><td>stream breaks off (reset, idle timeout)</td><td>commit what was relayed; cancel if nothing was</td></tr>
 *   <tr><td>upstream 429 (or Anthropic's 529)</td><td>cancel; its {@code Retry-After} is passed on
 *       (Google's {@code RetryInfo} in the body starts the cooldown and gives {@code Retry-After})</td></tr>
 *   <tr><td>upstream 4xx/5xx, timeout, unreachable</td><td>cancel</td></tr>
 * </table>
 */
public final class MeteredServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final System.Logger LOG = System.getLogger(MeteredServlet.class.getName());

    private final transient Endpoint endpoint;
    private final transient Gateway gateway;

    public MeteredServlet(Endpoint endpoint, Gateway gateway) {
        this.endpoint = endpoint;
        this.gateway = gateway;
    }

    /**
     * Starts answering asynchronously and returns the thread: the body is read as it arrives, and
     * each later step runs on the thread of the event that allows it.
     */
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!request.getMethod().equals("POST")) {
            // GET /v1/chat/completions (stored completions) and the like: neither metered nor relayed
            PassthroughServlet.unknown(gateway, request, response, request.getServletPath());
            return;
        }
        Exchange exchange = Exchange.of(request); // taken once: configuration, caller, log entry
        GatewayConfig config = exchange.config();
        AsyncClient client =
                AsyncClient.start(request, response, config.server().clientIdleTimeout());
        Requests.readAsync(
                request,
                config.limits().maxBodyBytes(),
                body -> new Metered(client, config).run(() -> received(client, exchange, body)),
                failure -> unread(client, failure));
    }

    /** The request, once its body is in: validate, estimate, route, admit, then forward. */
    private void received(AsyncClient client, Exchange exchange, Requests.Body body) throws IOException {
        HttpServletRequest request = client.request();
        HttpServletResponse response = client.response();
        GatewayConfig config = exchange.config();
        Account account = exchange.account();
        Endpoint.Call call;
        try {
            BadRequest refused = body.refused();
            if (refused != null) {
                throw refused;
            }
            ObjectNode json = Requests.json(body.bytes());
            if (endpoint.answersItself(request, response, json)) {
                client.complete();
                return; // such as Anthropic's count_tokens: the gateway's estimate, charged nothing
            }
            call = endpoint.parse(request, json, config.limits(), gateway.tokens());
        } catch (BadRequest e) {
            e.answer(endpoint.protocol(), endpoint.metric(), gateway.metrics(), response);
            client.complete();
            return;
        }

        Charge charge = Charge.of(config, account, call.model());
        AccessLog.Entry logged = exchange.log();
        if (logged != null) {
            logged.model = call.model();
            logged.estimatedTokens = call.estimate();
        }
        Upstream.Route route = gateway.route(response, endpoint.protocol(), call.model(), endpoint.metric());
        if (route == null) {
            client.complete();
            return; // answered: 404 (no upstream serves the model) or 429 (the upstream's cooldown), uncharged
        }
        Endpoint.Call parsed = call;
        gateway.admit(response, endpoint, account, charge, call, logged)
                .whenComplete((ticket, failure) -> admitted(client, config, parsed, route, body, ticket, failure));
    }

    /** The limiter's answer, on the thread that brought it: forward, or end what was answered. */
    private void admitted(
            AsyncClient client,
            GatewayConfig config,
            Endpoint.Call call,
            Upstream.Route route,
            Requests.Body body,
            Admission.@Nullable Ticket ticket,
            @Nullable Throwable failure) {
        if (failure != null) {
            new Metered(client, config)
                    .crashed(failure instanceof CompletionException c && c.getCause() != null ? c.getCause() : failure);
            return;
        }
        if (ticket == null) {
            client.complete();
            return; // answered: 429, 400 or 503
        }
        Metered admitted = new Metered(client, config, call, ticket, body.bytes());
        admitted.run(() -> admitted.forward(route));
    }

    /** The body could not be read: the client went away, or sent nothing for its idle timeout. */
    private void unread(AsyncClient client, Throwable failure) {
        HttpServletResponse response = client.response();
        if (!response.isCommitted()) {
            try {
                ApiErrors.write(
                        endpoint.protocol(),
                        response,
                        400,
                        "invalid_request_error",
                        "request_body_unread",
                        null,
                        "The request body could not be read: " + failure.getMessage());
            } catch (IOException | RuntimeException e) {
                // the client is gone: nobody reads the answer
            }
        }
        client.complete(); // nothing was charged
    }

    /**
     * One admitted request on its way: forwarded, and settled once by how its answer ended. Each
     * step runs on the thread that brought it (the upstream client's, or the server's); a step that
     * throws cancels the admission ({@code gateway_error}) and ends the answer.
     */
    private final class Metered {
        private final AsyncClient client;
        private final GatewayConfig config;
        private final Endpoint.@Nullable Call call;
        private final Admission.@Nullable Ticket ticket;
        private final byte[] sent;
        private volatile Upstream.@Nullable Exchange exchange;

        Metered(AsyncClient client, GatewayConfig config) {
            this(client, config, null, null, new byte[0]);
        }

        /**
         * @param sent the body as the client sent it, forwarded as it is unless the endpoint changed it
         */
        Metered(
                AsyncClient client,
                GatewayConfig config,
                Endpoint.@Nullable Call call,
                Admission.@Nullable Ticket ticket,
                byte[] sent) {
            this.client = client;
            this.config = config;
            this.call = call;
            this.ticket = ticket;
            this.sent = sent;
        }

        /** Runs one step; what escapes it is caught here, never left to the thread that ran it. */
        void run(Step step) {
            try {
                step.run();
            } catch (IOException | RuntimeException e) {
                crashed(e);
            }
        }

        /** A step threw: nothing more is relayed, the admission is given back, the answer ended. */
        void crashed(Throwable failure) {
            LOG.log(System.Logger.Level.WARNING, "a metered request failed in the gateway; it is cancelled", failure);
            Upstream.Exchange sent = exchange;
            if (sent != null) {
                sent.abort();
            }
            if (ticket != null) {
                ticket.cancel("gateway_error"); // a settled ticket ignores this
            }
            HttpServletResponse response = client.response();
            if (!response.isCommitted()) {
                try {
                    response.reset();
                    ApiErrors.write(
                            endpoint.protocol(),
                            response,
                            500,
                            "server_error",
                            "server_error",
                            null,
                            "The gateway failed while answering this request.");
                } catch (IOException | RuntimeException e) {
                    failure.addSuppressed(e);
                }
            }
            client.complete();
        }

        void forward(Upstream.Route route) throws IOException {
            Endpoint.Call forwarded = java.util.Objects.requireNonNull(call, "call");
            Admission.Ticket admitted = java.util.Objects.requireNonNull(ticket, "ticket");
            long started = System.nanoTime();
            byte[] body = Requests.forwarded(forwarded, sent);
            client.quiet(); // the upstream's timeouts run now
            route.send(
                    "POST",
                    endpoint.upstreamPath(client.request(), forwarded),
                    "application/json",
                    body,
                    endpoint.upstreamHeaders(client.request()),
                    new Upstream.Answer() {
                        @Override
                        public void headers(Upstream.Exchange answer) {
                            exchange = answer;
                            run(() -> answered(answer, route, forwarded, admitted, started));
                        }

                        @Override
                        public void failed(Upstream.Failure failure) {
                            run(() -> {
                                admitted.cancel(failure.ending());
                                ApiErrors.upstreamFailed(endpoint.protocol(), client.response(), failure);
                                client.complete();
                            });
                        }
                    });
        }

        private void answered(
                Upstream.Exchange answer,
                Upstream.Route route,
                Endpoint.Call call,
                Admission.Ticket ticket,
                long started)
                throws IOException {
            gateway.metrics().upstreamHeaders(endpoint.metric(), Duration.ofNanos(System.nanoTime() - started));
            int status = answer.status();
            AccessLog.Entry logged = Exchange.of(client.request()).log();
            if (logged != null) {
                logged.upstreamStatus = status;
            }
            if (status < 200 || status > 299) {
                relayRefusal(answer, route, ticket);
            } else if (endpoint.streamed(call, answer)) {
                relayStream(answer, call, ticket);
            } else {
                relayPlain(answer, call, ticket);
            }
        }

        /** Any non-2xx answer: the upstream did no billable work, so the admission is given back. */
        private void relayRefusal(Upstream.Exchange answer, Upstream.Route route, Admission.Ticket ticket) {
            int status = answer.status();
            ticket.cancel(status == 429 ? "upstream_429" : status == 529 ? "upstream_529" : "upstream_error");
            answer.readAll((bytes, failure) -> run(() -> {
                HttpServletResponse response = client.response();
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
                    client.complete();
                    return;
                }
                byte[] body = bytes == null ? new byte[0] : bytes;
                Duration delay = status == 429 ? endpoint.retryDelay(body) : null;
                if (delay != null) {
                    route.coolDown(delay); // Google's retry time is in the body: the cooldown starts from it
                    if (answer.header("retry-after") == null) {
                        RetryAfter.write(delay, response::setHeader);
                    }
                }
                relayBytes(answer, body);
            }));
        }

        private void relayPlain(Upstream.Exchange answer, Endpoint.Call call, Admission.Ticket ticket) {
            answer.readAll((bytes, failure) -> run(() -> {
                if (bytes == null) {
                    ticket.cancel("upstream_unreachable");
                    ApiErrors.write(
                            endpoint.protocol(),
                            client.response(),
                            502,
                            "upstream_error",
                            "upstream_broken",
                            null,
                            "The upstream's response broke off: " + (failure == null ? "" : failure.getMessage()));
                    client.complete();
                    return;
                }
                // answered once the store has the settlement; a client gone by now was charged all
                // the same: the work is done
                ticket.commitAsync(plainUsage(bytes, call), "completed")
                        .whenComplete((settled, failure2) -> run(() -> relayBytes(answer, bytes)));
            }));
        }

        /** Answers with the upstream's status, the headers the client may see and {@code bytes}. */
        private void relayBytes(Upstream.Exchange answer, byte[] bytes) {
            HttpServletResponse response = client.response();
            response.setStatus(answer.status());
            Upstream.copyHeaders(answer, response);
            response.setContentLength(bytes.length);
            Relay.send(client, bytes, gateway.metrics().relays());
        }

        private void relayStream(Upstream.Exchange answer, Endpoint.Call call, Admission.Ticket ticket) {
            HttpServletResponse response = client.response();
            response.setStatus(answer.status());
            Upstream.copyHeaders(answer, response);
            response.setHeader("Cache-Control", "no-cache");
            response.setHeader("X-Accel-Buffering", "no");
            StreamFraming sse = endpoint.framing(call, answer, gateway.tokens());
            new Relay(
                            client,
                            answer.body(),
                            sse,
                            config.limits().streamBufferBytes(),
                            new Relay.Finish() {
                                @Override
                                public byte @Nullable [] ended(Relay.End end, @Nullable Throwable cause) {
                                    return settle(sse, sse.ending(end), answer, call, ticket);
                                }

                                @Override
                                public void crashed(Throwable failure) {
                                    answer.abort();
                                    ticket.cancel("gateway_error");
                                }
                            },
                            gateway.metrics().relays())
                    .start();
        }

        /** Settles a stream by how it ended; returns the error event a stream that broke off ends with. */
        private byte @Nullable [] settle(
                StreamFraming sse,
                SseRelay.Ending ending,
                Upstream.Exchange answer,
                Endpoint.Call call,
                Admission.Ticket ticket) {
            SseRelay.Events events = sse.events();
            TokenUsage used = events.used(call.promptTokens());
            switch (ending) {
                case COMPLETED -> {
                    if (events.failed() && events.nothing()) {
                        ticket.cancel(events.ending());
                    } else {
                        ticket.commit(used, events.ending());
                    }
                    return null;
                }
                case CLIENT_GONE -> {
                    answer.abort();
                    ticket.commit(used, "client_disconnected");
                    return null;
                }
                default -> {
                    answer.abort();
                    if (events.nothing()) {
                        ticket.cancel("stream_broken");
                    } else {
                        ticket.commit(used, "stream_broken");
                    }
                    return sse.brokenNotice();
                }
            }
        }
    }

    /** A step of a request that may throw. */
    @FunctionalInterface
    private interface Step {
        void run() throws IOException;
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
