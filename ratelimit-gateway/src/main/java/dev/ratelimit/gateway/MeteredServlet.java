package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.GatewayConfig.ModelCap;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * {@code POST /v1/chat/completions} (plain and streamed) and {@code POST /v1/embeddings}: validate,
 * estimate the tokens, admit against the tenant's budgets and the model's upstream cap, forward,
 * and settle the admission exactly once by how the response ended.
 *
 * <table>
 *   <caption>How each ending settles</caption>
 *   <tr><th>ending</th><th>settlement</th></tr>
 *   <tr><td>upstream 2xx, plain</td><td>commit the upstream's {@code usage} (or the counted tokens)</td></tr>
 *   <tr><td>stream finished</td><td>commit the usage chunk's total</td></tr>
 *   <tr><td>client disconnects mid-stream</td><td>commit the prompt and the completion tokens relayed so far</td></tr>
 *   <tr><td>stream breaks off (reset, idle timeout)</td><td>commit what was relayed; cancel if nothing was</td></tr>
 *   <tr><td>upstream 429</td><td>cancel; its {@code Retry-After} is passed on</td></tr>
 *   <tr><td>upstream 4xx/5xx, timeout, unreachable</td><td>cancel</td></tr>
 * </table>
 */
final class MeteredServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** The two metered endpoints. */
    enum Kind {
        CHAT("chat", "/chat/completions"),
        EMBEDDINGS("embeddings", "/embeddings");

        final String metric;
        final String upstreamPath;

        Kind(String metric, String upstreamPath) {
            this.metric = metric;
            this.upstreamPath = upstreamPath;
        }
    }

    private final Kind kind;
    private final transient Gateway gateway;

    MeteredServlet(Kind kind, Gateway gateway) {
        this.kind = kind;
        this.gateway = gateway;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (!request.getMethod().equals("POST")) {
            response.setHeader("Allow", "POST");
            refuse(
                    response,
                    new BadRequest(405, "method_not_allowed", null, "Use POST for /v1" + kind.upstreamPath + "."));
            return;
        }
        ApiKeyFilter.Account account = ApiKeyFilter.account(request);
        GatewayConfig config = gateway.config();
        ObjectNode body;
        String model;
        long promptTokens;
        long estimate;
        Requests.Chat chat = null;
        try {
            body = Requests.read(request, config.limits().maxBodyBytes());
            if (kind == Kind.CHAT) {
                chat = Requests.chat(body, config.limits().defaultMaxCompletionTokens());
                model = chat.model();
                promptTokens = gateway.tokens().chatPrompt(model, chat.body().get("messages"));
                estimate = promptTokens + chat.n() * chat.maxCompletionTokens();
            } else {
                Requests.Embeddings embeddings = Requests.embeddings(body);
                model = embeddings.model();
                promptTokens = gateway.tokens().embeddingInput(model, body.get("input"));
                estimate = promptTokens;
            }
        } catch (BadRequest e) {
            refuse(response, e);
            return;
        }

        ModelCap cap = config.capOf(model);
        AccessLog.Entry logged = AccessLog.entry(request);
        if (logged != null) {
            logged.model = model;
            logged.estimatedTokens = estimate;
        }
        Admission.Ticket ticket = gateway.admit(response, kind.metric, account, cap, estimate, logged);
        if (ticket == null) {
            return; // answered: 429, 400 or 503
        }
        try {
            forward(request, response, body, chat, model, promptTokens, ticket);
        } finally {
            ticket.cancel("gateway_error"); // a settled ticket ignores this: it only catches what escaped above
        }
    }

    private void forward(
            HttpServletRequest request,
            HttpServletResponse response,
            ObjectNode body,
            Requests.@Nullable Chat chat,
            String model,
            long promptTokens,
            Admission.Ticket ticket)
            throws IOException {
        Requests.@Nullable Chat streamed = chat != null && chat.stream() ? chat : null;
        if (streamed != null && !streamed.clientWantsUsage()) {
            // the gateway needs the usage to settle; the chunk carrying it is dropped on the way back
            ObjectNode options =
                    body.has("stream_options") && body.get("stream_options").isObject()
                            ? (ObjectNode) body.get("stream_options")
                            : body.putObject("stream_options");
            options.put("include_usage", true);
        }
        long started = System.nanoTime();
        Upstream.Exchange exchange;
        try {
            exchange = gateway.upstream()
                    .send("POST", kind.upstreamPath, "application/json", OpenAi.JSON.writeValueAsBytes(body));
        } catch (Upstream.Failure e) {
            ticket.cancel(e.ending());
            e.answer(response);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ticket.cancel("upstream_unreachable");
            return;
        }
        gateway.metrics().upstreamHeaders(kind.metric, Duration.ofNanos(System.nanoTime() - started));
        int status = exchange.status();
        AccessLog.Entry logged = AccessLog.entry(request);
        if (logged != null) {
            logged.upstreamStatus = status;
        }
        if (status < 200 || status > 299) {
            relayRefusal(response, exchange, ticket);
        } else if (streamed != null && exchange.isEventStream()) {
            relayStream(response, exchange, streamed, model, promptTokens, ticket);
        } else {
            relayPlain(response, exchange, model, promptTokens, ticket);
        }
    }

    /** Any non-2xx answer: the upstream did no billable work, so the admission is given back. */
    private void relayRefusal(HttpServletResponse response, Upstream.Exchange exchange, Admission.Ticket ticket)
            throws IOException {
        int status = exchange.status();
        ticket.cancel(status == 429 ? "upstream_429" : "upstream_error");
        byte[] bytes;
        try {
            bytes = exchange.readAll();
        } catch (IOException e) {
            bytes = new byte[0];
        }
        if (status == 401 || status == 403) {
            // the gateway's own upstream key was refused: not the client's fault, nor its key
            OpenAi.error(
                    response,
                    502,
                    "upstream_error",
                    "upstream_auth_failed",
                    null,
                    "The upstream refused the gateway's credentials (HTTP " + status + "); check UPSTREAM_API_KEY.");
            return;
        }
        response.setStatus(status);
        Upstream.copyHeaders(exchange, response);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    private void relayPlain(
            HttpServletResponse response,
            Upstream.Exchange exchange,
            String model,
            long promptTokens,
            Admission.Ticket ticket)
            throws IOException {
        byte[] bytes;
        try {
            bytes = exchange.readAll();
        } catch (IOException e) {
            ticket.cancel("upstream_unreachable");
            OpenAi.error(
                    response,
                    502,
                    "upstream_error",
                    "upstream_broken",
                    null,
                    "The upstream's response broke off: " + e.getMessage());
            return;
        }
        ticket.commit(plainTokens(bytes, model, promptTokens), "completed");
        response.setStatus(exchange.status());
        Upstream.copyHeaders(exchange, response);
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes); // a client gone by now was charged all the same: the work is done
    }

    private void relayStream(
            HttpServletResponse response,
            Upstream.Exchange exchange,
            Requests.Chat chat,
            String model,
            long promptTokens,
            Admission.Ticket ticket)
            throws IOException {
        response.setStatus(exchange.status());
        Upstream.copyHeaders(exchange, response);
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        SseRelay relay = new SseRelay(chat.clientWantsUsage());
        ServletOutputStream out = response.getOutputStream();
        SseRelay.Ending ending;
        try {
            response.flushBuffer(); // status and headers now, before the first chunk
            ending = relay.relay(exchange.body(), out);
        } catch (IOException e) {
            ending = SseRelay.Ending.CLIENT_GONE;
        }
        long relayed = promptTokens + gateway.tokens().count(model, relay.produced());
        JsonNode usage = relay.usage();
        switch (ending) {
            case COMPLETED -> ticket.commit(usage != null ? total(usage) : relayed, "stream_completed");
            case CLIENT_GONE -> {
                exchange.abort();
                ticket.commit(usage != null ? total(usage) : relayed, "client_disconnected");
            }
            case BROKEN -> {
                exchange.abort();
                if (usage != null) {
                    ticket.commit(total(usage), "stream_broken");
                } else if (relay.produced().isEmpty()) {
                    ticket.cancel("stream_broken");
                } else {
                    ticket.commit(relayed, "stream_broken");
                }
                relay.writeBrokenNotice(out);
            }
        }
    }

    /** The upstream's usage, or failing that the prompt estimate plus the answer's counted tokens. */
    private long plainTokens(byte[] bytes, String model, long promptTokens) {
        try {
            JsonNode answer = OpenAi.JSON.readTree(bytes);
            JsonNode usage = answer.get("usage");
            if (usage != null && usage.isObject()) {
                return total(usage);
            }
            StringBuilder text = new StringBuilder();
            for (JsonNode choice : answer.path("choices")) {
                text.append(choice.path("message").path("content").asText(""));
            }
            return promptTokens + gateway.tokens().count(model, text.toString());
        } catch (IOException e) { // not JSON after all: the prompt was still read
            return promptTokens;
        }
    }

    private static long total(JsonNode usage) {
        JsonNode total = usage.get("total_tokens");
        if (total != null && total.canConvertToLong()) {
            return Math.max(0, total.longValue());
        }
        return Math.max(
                0,
                usage.path("prompt_tokens").asLong(0)
                        + usage.path("completion_tokens").asLong(0));
    }

    private void refuse(HttpServletResponse response, BadRequest e) throws IOException {
        gateway.metrics().refused(kind.metric, e.status, e.code);
        OpenAi.error(response, e.status, "invalid_request_error", e.code, e.param, String.valueOf(e.getMessage()));
    }
}
