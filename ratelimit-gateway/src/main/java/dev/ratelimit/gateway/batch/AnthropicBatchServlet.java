package dev.ratelimit.gateway.batch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicEndpoint;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicEvents;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicRequests;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.Requests;
import dev.ratelimit.gateway.web.Exchange;
import dev.ratelimit.gateway.web.Gateway;
import dev.ratelimit.gateway.web.PassthroughServlet;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Anthropic's Message Batches, metered: {@code POST /v1/messages/batches}, {@code GET
 * /v1/messages/batches[/{id}]}, {@code POST .../{id}/cancel}, {@code GET .../{id}/results} and
 * {@code DELETE .../{id}}, relayed to the first Anthropic upstream. Creating a batch reserves, in one
 * admission ({@link Batches#admit}), every request's prompt counted as the Messages API's are
 * ({@link AnthropicTokens}) plus its {@code max_tokens}, all requests naming one model, at batch
 * prices; a refusal (429, or 400 for a batch no window could ever hold, in Anthropic's shape) never
 * reaches the upstream. The reservation is settled when the batch's {@code processing_status} is
 * {@code ended}, learned from the owner's {@code GET}, the cancel answer or the poller: to the sum of
 * the succeeded results' {@code usage} by kind (cache reads and writes at their prices), or given back
 * whole when none succeeded. Only the tenant that created a batch reads, cancels, downloads or deletes
 * it; anyone else hears Anthropic's 404, and the list shows a tenant only its own.
 */
public final class AnthropicBatchServlet extends HttpServlet implements Batches.Api {

    private static final long serialVersionUID = 1L;

    /** The Message Batches' path on the gateway. */
    public static final String PATH = Anthropic.MESSAGES + "/batches";

    private static final String UPSTREAM = "/messages/batches";
    private static final byte[] NONE = new byte[0];

    private final transient Batches batches;
    private final transient Gateway gateway;
    private final transient AnthropicEndpoint endpoint;
    private final transient AnthropicTokens tokens;

    public AnthropicBatchServlet(Batches batches, AnthropicEndpoint endpoint, AnthropicTokens tokens) {
        this.batches = batches;
        this.gateway = batches.gateway();
        batches.register(this);
        this.endpoint = endpoint;
        this.tokens = tokens;
    }

    @Override
    public Protocol protocol() {
        return Protocol.ANTHROPIC;
    }

    @Override
    public Batches.@Nullable Fetched fetch(String id) throws IOException {
        return call("GET", UPSTREAM + "/" + id, null, NONE, Map.of(), null);
    }

    /** An ended batch's usage: the sum of its succeeded results' {@code message.usage}, by kind. */
    @Override
    public Batches.@Nullable Ended ended(String id, Batches.Fetched fetched) throws IOException {
        JsonNode batch = OpenAi.JSON.readTree(fetched.body());
        if (!"ended".equals(batch.path("processing_status").asText())) {
            return null;
        }
        Batches.Fetched results = call("GET", UPSTREAM + "/" + id + "/results", null, NONE, Map.of(), null);
        if (results == null || !results.ok()) {
            return null; // read again next time
        }
        return new Batches.Ended("ended", usage(results.body()));
    }

    /** The sum of the succeeded results' {@code result.message.usage}; the others used nothing billed. */
    static TokenUsage usage(byte[] jsonl) throws IOException {
        return Batches.sum(jsonl, line -> {
            JsonNode result = line.path("result");
            if (!"succeeded".equals(result.path("type").asText())) {
                return null;
            }
            JsonNode usage = result.path("message").path("usage");
            return AnthropicEvents.usageOf(
                    usage, Math.max(0, usage.path("output_tokens").asLong(0)));
        });
    }

    @Override
    public void destroy() {
        batches.close();
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String below = request.getPathInfo() == null ? "" : request.getPathInfo();
        String[] parts = below.isEmpty() ? new String[0] : below.substring(1).split("/", -1);
        String method = request.getMethod();
        String tenant = Exchange.of(request).account().tenant();
        Map<String, String> headers = endpoint.upstreamHeaders(request);
        try {
            if (parts.length == 0 && method.equals("POST")) {
                create(request, response, tenant, headers);
            } else if (parts.length == 0 && method.equals("GET")) {
                batches.list(Protocol.ANTHROPIC, UPSTREAM, headers, request, response, tenant);
            } else if (parts.length == 1 && !parts[0].isEmpty() && (method.equals("GET") || method.equals("DELETE"))) {
                if (owned(response, parts[0], tenant)) {
                    Batches.Fetched batch = call("GET", UPSTREAM + "/" + parts[0], null, NONE, headers, response);
                    if (batch == null) {
                        return;
                    }
                    // settled before a delete: the results are gone after it
                    batches.settleIfEnded(this, parts[0], batch);
                    if (method.equals("GET")) {
                        Batches.relay(batch, response);
                    } else {
                        Batches.relay(
                                call("DELETE", UPSTREAM + "/" + parts[0], null, NONE, headers, response), response);
                    }
                }
            } else if (parts.length == 2 && parts[1].equals("cancel") && method.equals("POST")) {
                if (owned(response, parts[0], tenant)) {
                    Requests.bytes(
                            request, Exchange.of(request).config().limits().maxBodyBytes());
                    Batches.Fetched canceled = call(
                            "POST", UPSTREAM + "/" + parts[0] + "/cancel", "application/json", NONE, headers, response);
                    if (canceled != null) {
                        batches.settleIfEnded(this, parts[0], canceled);
                        Batches.relay(canceled, response);
                    }
                }
            } else if (parts.length == 2 && parts[1].equals("results") && method.equals("GET")) {
                if (owned(response, parts[0], tenant)) {
                    // streamed as it arrives, whatever its size
                    PassthroughServlet.relay(
                            gateway,
                            request,
                            response,
                            Protocol.ANTHROPIC,
                            UPSTREAM + "/" + parts[0] + "/results",
                            NONE,
                            headers);
                }
            } else {
                PassthroughServlet.unknown(gateway, request, response, request.getRequestURI());
            }
        } catch (BadRequest e) {
            e.answer(Protocol.ANTHROPIC, "message_batches", gateway.metrics(), response);
        }
    }

    /** Whether {@code tenant} owns the batch; answers Anthropic's 404 when it does not. */
    private boolean owned(HttpServletResponse response, String id, String tenant) throws IOException {
        if (batches.owns(id, tenant)) {
            return true;
        }
        Batches.notFound(Protocol.ANTHROPIC, response, "message batch", id);
        return false;
    }

    /**
     * Validates every request, reserves the batch's worst case, then creates it upstream; a refusal
     * never reaches the upstream. The body may be as large as an OpenAI batch's input file ({@code
     * limits.max-file-bytes}): it is the batch.
     */
    private void create(
            HttpServletRequest request, HttpServletResponse response, String tenant, Map<String, String> headers)
            throws IOException, BadRequest {
        byte[] sent =
                Requests.bytes(request, Exchange.of(request).config().limits().maxFileBytes());
        ObjectNode body = Requests.json(sent);
        JsonNode requests = body.get("requests");
        if (requests == null || !requests.isArray() || requests.isEmpty()) {
            throw invalid("requests: Input should be a non-empty list of requests");
        }
        String model = null;
        long prompt = 0;
        long output = 0;
        for (int i = 0; i < requests.size(); i++) {
            JsonNode one = requests.get(i);
            String at = "requests." + i;
            if (!one.isObject()
                    || !one.path("custom_id").isTextual()
                    || one.path("custom_id").textValue().isEmpty()) {
                throw invalid(at + ".custom_id: Field required");
            }
            if (!(one.get("params") instanceof ObjectNode params)) {
                throw invalid(at + ".params: Field required");
            }
            AnthropicRequests.Messages messages;
            try {
                messages = AnthropicRequests.messages(params, true);
            } catch (BadRequest e) {
                throw invalid(at + ".params." + e.getMessage());
            }
            if (model != null && !model.equals(messages.model())) {
                throw invalid(at + ".params.model: the gateway meters a batch of one model; this request names '"
                        + messages.model() + "', the ones before it '" + model + "'");
            }
            model = messages.model();
            prompt += tokens.prompt(params);
            output += messages.maxTokens();
        }
        Admission.Ticket ticket =
                batches.admit(request, response, endpoint, java.util.Objects.requireNonNull(model), prompt, output);
        if (ticket == null) {
            return; // refused, answered
        }
        batches.create(this, ticket, UPSTREAM, sent, versioned(headers), response, tenant);
    }

    private static BadRequest invalid(String message) {
        return new BadRequest(400, "invalid_request_error", null, message);
    }

    /** Calls the first Anthropic upstream and reads its answer whole ({@link Batches#call}). */
    private Batches.@Nullable Fetched call(
            String method,
            String path,
            @Nullable String contentType,
            byte[] body,
            Map<String, String> headers,
            @Nullable HttpServletResponse response)
            throws IOException {
        return batches.call(Protocol.ANTHROPIC, method, path, contentType, body, versioned(headers), response);
    }

    /** The headers sent upstream: the client's {@code anthropic-version} and beta, or the default version. */
    private static Map<String, String> versioned(Map<String, String> headers) {
        return headers.isEmpty() ? Map.of("anthropic-version", Anthropic.DEFAULT_VERSION) : headers;
    }
}
