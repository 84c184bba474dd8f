package dev.ratelimit.gateway.batch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.Spending;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.OpenAiEndpoint;
import dev.ratelimit.gateway.protocol.openai.Requests;
import dev.ratelimit.gateway.web.Exchange;
import dev.ratelimit.gateway.web.Gateway;
import dev.ratelimit.gateway.web.PassthroughServlet;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * OpenAI's Batch API, metered: {@code POST /v1/files} (an upload, at most {@code limits.max-file-bytes}),
 * {@code GET /v1/files/{id}[/content]}, {@code POST /v1/batches}, {@code GET /v1/batches[/{id}]} and
 * {@code POST /v1/batches/{id}/cancel}. Creating a batch reads its input file from the upstream
 * and reserves, in one admission like any metered request, every line's counted prompt plus its
 * most output tokens, priced at the model's batch price ({@link Spending#batchPrices}), against the
 * tenant's windows and every level of its charge; a refusal never reaches the upstream. The tenant that created a batch
 * or uploaded a file owns it ({@link BatchOwners}); anyone else hears 404, and the list shows a
 * tenant only its own batches. The reservation is settled to the usage in the batch's output file
 * when the owner reads the batch in a terminal state (completed, failed, expired, cancelled) or the
 * poller (every {@code limits.batch-poll-interval-seconds}) finds it there, whichever comes first;
 * it is given back when the batch ended with no output. Admission, ownership, settlement and
 * polling are the {@link Batches} core's, shared with Anthropic's Message Batches.
 */
public final class BatchServlet extends HttpServlet implements Batches.Api {

    private static final long serialVersionUID = 1L;
    private static final Set<String> TERMINAL = Set.of("completed", "failed", "expired", "cancelled");
    private static final byte[] NONE = new byte[0];

    private final transient Batches batches;
    private final transient Gateway gateway;

    public BatchServlet(Batches batches) {
        this.batches = batches;
        this.gateway = batches.gateway();
        batches.register(this);
    }

    @Override
    public Protocol protocol() {
        return Protocol.OPENAI;
    }

    @Override
    public Batches.@Nullable Fetched fetch(String id) throws IOException {
        return call("GET", "/batches/" + id, null, NONE, null);
    }

    /** A terminal batch's usage: the sum of its output file's lines; none when it has no output file. */
    @Override
    public Batches.@Nullable Ended ended(String id, Batches.Fetched fetched) throws IOException {
        JsonNode batch = OpenAi.JSON.readTree(fetched.body());
        String status = batch.path("status").asText("");
        if (!TERMINAL.contains(status)) {
            return null;
        }
        String output = batch.path("output_file_id").asText("");
        if (output.isEmpty()) {
            return new Batches.Ended(status, TokenUsage.of(0, 0));
        }
        Batches.Fetched lines = call("GET", "/files/" + output + "/content", null, NONE, null);
        if (lines == null || !lines.ok()) {
            return null; // read again next time
        }
        // the sum of every output line's response.body.usage
        return new Batches.Ended(
                status,
                Batches.sum(
                        lines.body(),
                        line -> Endpoint.usageOf(
                                line.path("response").path("body").get("usage"))));
    }

    @Override
    public void destroy() {
        batches.close();
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        String below = path.substring("/v1".length());
        String[] parts = below.substring(1).split("/", -1);
        String method = request.getMethod();
        String tenant = Exchange.of(request).account().tenant();
        if (Anthropic.isAnthropicCaller(request)) {
            // Anthropic's Files API shares the path: not served, in Anthropic's shape
            PassthroughServlet.unknown(gateway, request, response, request.getRequestURI());
            return;
        }
        try {
            if (parts[0].equals("files")) {
                files(request, response, method, parts, tenant);
            } else {
                batches(request, response, method, parts, tenant);
            }
        } catch (BadRequest e) {
            e.answer(Protocol.OPENAI, "batches", gateway.metrics(), response);
        }
    }

    private void files(
            HttpServletRequest request, HttpServletResponse response, String method, String[] parts, String tenant)
            throws IOException, BadRequest {
        BatchOwners owners = batches.owners();
        if (parts.length == 1 && method.equals("POST")) {
            byte[] upload = Requests.bytes(
                    request, Exchange.of(request).config().limits().maxFileBytes());
            Batches.Fetched created = call("POST", "/files", request.getContentType(), upload, response);
            if (created == null) {
                return;
            }
            if (created.ok()) {
                owners.own(
                        BatchOwners.FILE,
                        OpenAi.JSON.readTree(created.body()).path("id").asText(),
                        tenant);
            }
            Batches.relay(created, response);
            return;
        }
        if ((parts.length == 2 || (parts.length == 3 && parts[2].equals("content"))) && method.equals("GET")) {
            if (!owners.owns(BatchOwners.FILE, parts[1], tenant)) {
                Batches.notFound(Protocol.OPENAI, response, "file", parts[1]);
                return;
            }
            Batches.Fetched file = call(
                    "GET", "/files/" + String.join("/", List.of(parts).subList(1, parts.length)), null, NONE, response);
            if (file != null) {
                Batches.relay(file, response);
            }
            return;
        }
        PassthroughServlet.unknown(gateway, request, response, request.getRequestURI());
    }

    private void batches(
            HttpServletRequest request, HttpServletResponse response, String method, String[] parts, String tenant)
            throws IOException, BadRequest {
        if (parts.length == 1 && method.equals("POST")) {
            create(request, response, tenant);
        } else if (parts.length == 1 && method.equals("GET")) {
            batches.list(Protocol.OPENAI, "/batches", Map.of(), request, response, tenant);
        } else if (parts.length == 2 && method.equals("GET")) {
            if (!batches.owns(parts[1], tenant)) {
                Batches.notFound(Protocol.OPENAI, response, "batch", parts[1]);
                return;
            }
            Batches.Fetched batch = call("GET", "/batches/" + parts[1], null, NONE, response);
            if (batch != null) {
                batches.settleIfEnded(this, parts[1], batch);
                Batches.relay(batch, response);
            }
        } else if (parts.length == 3 && parts[2].equals("cancel") && method.equals("POST")) {
            if (!batches.owns(parts[1], tenant)) {
                Batches.notFound(Protocol.OPENAI, response, "batch", parts[1]);
                return;
            }
            Requests.bytes(request, Exchange.of(request).config().limits().maxBodyBytes());
            Batches.Fetched cancelled =
                    call("POST", "/batches/" + parts[1] + "/cancel", "application/json", NONE, response);
            if (cancelled != null) {
                batches.settleIfEnded(this, parts[1], cancelled);
                Batches.relay(cancelled, response);
            }
        } else {
            PassthroughServlet.unknown(gateway, request, response, request.getRequestURI());
        }
    }

    /** Reserves the batch's worst case, then creates it upstream; a refusal never reaches the upstream. */
    private void create(HttpServletRequest request, HttpServletResponse response, String tenant)
            throws IOException, BadRequest {
        GatewayConfig config = Exchange.of(request).config();
        byte[] sent = Requests.bytes(request, config.limits().maxBodyBytes());
        ObjectNode body = Requests.json(sent);
        String fileId = body.path("input_file_id").asText("");
        if (fileId.isEmpty()) {
            throw BadRequest.missing("input_file_id", "Missing required parameter: 'input_file_id'.");
        }
        if (!batches.owners().owns(BatchOwners.FILE, fileId, tenant)) {
            Batches.notFound(Protocol.OPENAI, response, "file", fileId);
            return;
        }
        Batches.Fetched input = call("GET", "/files/" + fileId + "/content", null, NONE, response);
        if (input == null) {
            return;
        }
        if (!input.ok()) {
            Batches.relay(input, response);
            return;
        }
        Worst worst = worst(input.body(), config.limits().defaultMaxCompletionTokens());
        Admission.Ticket ticket =
                batches.admit(request, response, OpenAiEndpoint.CHAT, worst.model, worst.prompt, worst.output);
        if (ticket == null) {
            return; // refused, answered
        }
        batches.create(this, ticket, "/batches", sent, Map.of(), response, tenant);
    }

    /** The model, prompt and most output tokens of every line of a batch's input file. */
    private record Worst(String model, long prompt, long output) {}

    private Worst worst(byte[] jsonl, long defaultMax) throws BadRequest {
        String model = null;
        long prompt = 0;
        long output = 0;
        int number = 0;
        for (String line : new String(jsonl, StandardCharsets.UTF_8).split("\n")) {
            number++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode body;
            try {
                body = OpenAi.JSON.readTree(line).path("body");
            } catch (IOException e) {
                throw invalidFile("line " + number + " is not JSON");
            }
            String lineModel = body.path("model").asText("");
            if (lineModel.isEmpty() || (model != null && !model.equals(lineModel))) {
                throw invalidFile("line " + number + " names no model, or another model than the lines before it");
            }
            model = lineModel;
            prompt += gateway.tokens().chatPrompt(model, body.path("messages"));
            JsonNode max =
                    body.has("max_completion_tokens") ? body.get("max_completion_tokens") : body.get("max_tokens");
            output += max != null && max.canConvertToLong() && max.asLong() > 0 ? max.asLong() : defaultMax;
        }
        if (model == null) {
            throw invalidFile("it holds no request");
        }
        return new Worst(model, prompt, output);
    }

    private static BadRequest invalidFile(String why) {
        return new BadRequest(
                400, "invalid_file", "input_file_id", "The batch's input file cannot be metered: " + why + ".");
    }

    /** Calls the first OpenAI upstream and reads its answer whole ({@link Batches#call}). */
    private Batches.@Nullable Fetched call(
            String method,
            String path,
            @Nullable String contentType,
            byte[] body,
            @Nullable HttpServletResponse response)
            throws IOException {
        return batches.call(Protocol.OPENAI, method, path, contentType, body, Map.of(), response);
    }
}
