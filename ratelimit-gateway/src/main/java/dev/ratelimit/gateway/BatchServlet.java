package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.UpstreamConfig.Protocol;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * OpenAI's Batch API, metered: {@code POST /v1/files} (an upload, at most {@code limits.max-file-bytes}),
 * {@code GET /v1/files/{id}[/content]}, {@code POST /v1/batches}, {@code GET /v1/batches[/{id}]} and
 * {@code POST /v1/batches/{id}/cancel}. Creating a batch reads its input file from the upstream
 * and reserves, in one admission like any metered request, every line's counted prompt plus its
 * most output tokens, priced at half the model's online price, against the tenant's windows and
 * every level of its charge; a refusal never reaches the upstream. The tenant that created a batch
 * or uploaded a file owns it ({@link BatchOwners}); anyone else hears 404, and the list shows a
 * tenant only its own batches. The reservation is settled to the usage in the batch's output file
 * when the owner reads the batch in a terminal state (completed, failed, expired, cancelled) or this
 * process's poller (every {@code limits.batch-poll-interval-seconds}) finds it there, whichever
 * comes first; it is given back when the batch ended with no output.
 *
 * <p>The upstream calls here wait (up to the upstream timeout) on the request's thread: these
 * control calls are few, unlike completions.
 */
final class BatchServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final System.Logger LOG = System.getLogger(BatchServlet.class.getName());
    private static final Set<String> TERMINAL = Set.of("completed", "failed", "expired", "cancelled");
    static final String FILE = "file";
    static final String BATCH = "batch";

    private final transient Gateway gateway;
    private final transient BatchOwners owners;
    /** The reservations of the batches this process admitted, until they are settled. */
    private final transient Map<String, Admission.Ticket> reserved = new ConcurrentHashMap<>();

    private final transient ScheduledExecutorService poller;

    /** Starts polling the batches this process admits every {@code limits.batch-poll-interval-seconds}. */
    BatchServlet(Gateway gateway, BatchOwners owners) {
        this.gateway = gateway;
        this.owners = owners;
        this.poller = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "ratelimit-batch-poller");
            thread.setDaemon(true);
            return thread;
        });
        long every = gateway.config().limits().batchPollInterval().toMillis();
        poller.scheduleWithFixedDelay(this::poll, every, every, TimeUnit.MILLISECONDS);
    }

    /** Asks the upstream about each batch this process holds a reservation for, and settles those that ended. */
    private void poll() {
        for (String id : List.copyOf(reserved.keySet())) {
            try {
                Fetched batch = call("GET", "/batches/" + id, null, new byte[0], null);
                if (batch != null) {
                    settleIfEnded(id, batch);
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "polling batch " + id + " failed; it is asked again next time", e);
            }
        }
    }

    @Override
    public void destroy() {
        poller.shutdownNow();
    }

    /** An upstream answer read whole. */
    private record Fetched(int status, @Nullable String contentType, byte[] body) {}

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
        String below = path.substring("/v1".length());
        String[] parts = below.substring(1).split("/", -1);
        String method = request.getMethod();
        String tenant = ApiKeyFilter.account(request).tenant();
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
        if (parts.length == 1 && method.equals("POST")) {
            byte[] upload =
                    Requests.bytes(request, gateway.config(request).limits().maxFileBytes());
            Fetched created = call("POST", "/files", request.getContentType(), upload, response);
            if (created == null) {
                return;
            }
            if (created.status() / 100 == 2) {
                owners.own(FILE, OpenAi.JSON.readTree(created.body()).path("id").asText(), tenant);
            }
            relay(created, response);
            return;
        }
        if ((parts.length == 2 || (parts.length == 3 && parts[2].equals("content"))) && method.equals("GET")) {
            if (!owners.owns(FILE, parts[1], tenant)) {
                notFound(response, "file", parts[1]);
                return;
            }
            Fetched file = call(
                    "GET",
                    "/files/" + String.join("/", List.of(parts).subList(1, parts.length)),
                    null,
                    new byte[0],
                    response);
            if (file != null) {
                relay(file, response);
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
            list(request, response, tenant);
        } else if (parts.length == 2 && method.equals("GET")) {
            if (!owners.owns(BATCH, parts[1], tenant)) {
                notFound(response, "batch", parts[1]);
                return;
            }
            Fetched batch = call("GET", "/batches/" + parts[1], null, new byte[0], response);
            if (batch != null) {
                settleIfEnded(parts[1], batch);
                relay(batch, response);
            }
        } else if (parts.length == 3 && parts[2].equals("cancel") && method.equals("POST")) {
            if (!owners.owns(BATCH, parts[1], tenant)) {
                notFound(response, "batch", parts[1]);
                return;
            }
            Requests.bytes(request, gateway.config(request).limits().maxBodyBytes());
            Fetched cancelled =
                    call("POST", "/batches/" + parts[1] + "/cancel", "application/json", new byte[0], response);
            if (cancelled != null) {
                settleIfEnded(parts[1], cancelled);
                relay(cancelled, response);
            }
        } else {
            PassthroughServlet.unknown(gateway, request, response, request.getRequestURI());
        }
    }

    /** Reserves the batch's worst case, then creates it upstream; a refusal never reaches the upstream. */
    private void create(HttpServletRequest request, HttpServletResponse response, String tenant)
            throws IOException, BadRequest {
        GatewayConfig config = gateway.config(request);
        byte[] sent = Requests.bytes(request, config.limits().maxBodyBytes());
        ObjectNode body = Requests.json(sent);
        String fileId = body.path("input_file_id").asText("");
        if (fileId.isEmpty()) {
            throw BadRequest.missing("input_file_id", "Missing required parameter: 'input_file_id'.");
        }
        if (!owners.owns(FILE, fileId, tenant)) {
            notFound(response, "file", fileId);
            return;
        }
        Fetched input = call("GET", "/files/" + fileId + "/content", null, new byte[0], response);
        if (input == null) {
            return;
        }
        if (input.status() / 100 != 2) {
            relay(input, response);
            return;
        }
        Worst worst = worst(input.body(), config.limits().defaultMaxCompletionTokens());
        ApiKeyFilter.Account account = ApiKeyFilter.account(request);
        Charge online = Charge.of(config, account, worst.model);
        Charge charge = new Charge(
                online.tenant(),
                online.team(),
                online.model(),
                batchPrice(online.price()),
                online.cap(),
                online.levels(),
                online.unpricedSpend());
        Endpoint.Call call =
                new Endpoint.Call(worst.model, body, worst.prompt, worst.prompt + worst.output, false, false);
        Admission.Ticket ticket;
        try {
            ticket = gateway.admit(response, OpenAiEndpoint.CHAT, account, charge, call, null)
                    .toCompletableFuture()
                    .get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
        if (ticket == null) {
            return; // refused, answered
        }
        ticket.hold(); // a batch holds no concurrency slot while it runs for hours
        Fetched created = call("POST", "/batches", "application/json", sent, response);
        if (created == null || created.status() / 100 != 2) {
            ticket.cancel(created == null ? "upstream_unreachable" : "upstream_error");
            if (created != null) {
                relay(created, response);
            }
            return;
        }
        String id = OpenAi.JSON.readTree(created.body()).path("id").asText();
        owners.own(BATCH, id, tenant);
        reserved.put(id, ticket);
        relay(created, response);
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

    /** The batch price: the online price halved, as OpenAI and Anthropic bill batches. */
    static @Nullable ModelPrice batchPrice(@Nullable ModelPrice online) {
        if (online == null) {
            return null;
        }
        BigDecimal half = new BigDecimal("0.5");
        return new ModelPrice(
                online.input().multiply(half),
                online.cachedInput().multiply(half),
                online.cacheWrite().multiply(half),
                online.output().multiply(half));
    }

    /** Settles a batch this process reserved once the upstream says it ended: to its output's usage. */
    private void settleIfEnded(String id, Fetched fetched) throws IOException {
        if (fetched.status() / 100 != 2) {
            return;
        }
        JsonNode batch = OpenAi.JSON.readTree(fetched.body());
        String status = batch.path("status").asText("");
        if (!TERMINAL.contains(status) || !reserved.containsKey(id)) {
            return;
        }
        String output = batch.path("output_file_id").asText("");
        TokenUsage used = TokenUsage.of(0, 0);
        if (!output.isEmpty()) {
            Fetched lines = call("GET", "/files/" + output + "/content", null, new byte[0], null);
            if (lines == null || lines.status() / 100 != 2) {
                return; // read again on the next GET
            }
            used = usage(lines.body());
        }
        Admission.Ticket ticket = reserved.remove(id);
        if (ticket == null) {
            return; // another request settled it
        }
        if (used.total() == 0) {
            ticket.cancel("batch_" + status);
        } else {
            ticket.commit(used, "batch_" + status);
        }
    }

    /** The sum of every output line's {@code response.body.usage}. */
    private static TokenUsage usage(byte[] jsonl) throws IOException {
        long input = 0;
        long cached = 0;
        long output = 0;
        for (String line : new String(jsonl, StandardCharsets.UTF_8).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            TokenUsage one = Endpoint.usageOf(
                    OpenAi.JSON.readTree(line).path("response").path("body").get("usage"));
            if (one != null) {
                input += one.input() + one.cachedInput();
                cached += one.cachedInput();
                output += one.output();
            }
        }
        return TokenUsage.openAi(input, cached, output);
    }

    private void list(HttpServletRequest request, HttpServletResponse response, String tenant) throws IOException {
        String query = request.getQueryString() == null ? "" : "?" + request.getQueryString();
        Fetched all = call("GET", "/batches" + query, null, new byte[0], response);
        if (all == null) {
            return;
        }
        if (all.status() / 100 != 2) {
            relay(all, response);
            return;
        }
        ObjectNode page = (ObjectNode) OpenAi.JSON.readTree(all.body());
        ArrayNode own = OpenAi.JSON.createArrayNode();
        for (JsonNode batch : page.path("data")) {
            if (owners.owns(BATCH, batch.path("id").asText(), tenant)) {
                own.add(batch);
            }
        }
        page.set("data", own);
        relay(new Fetched(200, "application/json", OpenAi.JSON.writeValueAsBytes(page)), response);
    }

    private static void notFound(HttpServletResponse response, String kind, String id) throws IOException {
        ApiErrors.write(
                Protocol.OPENAI,
                response,
                404,
                "invalid_request_error",
                "not_found",
                null,
                "No " + kind + " with id '" + id + "' found.");
    }

    /**
     * Calls the first OpenAI upstream and reads its answer whole; on failure answers {@code
     * response} (when given) with the gateway's error and returns {@code null}.
     */
    private @Nullable Fetched call(
            String method,
            String path,
            @Nullable String contentType,
            byte[] body,
            @Nullable HttpServletResponse response)
            throws IOException {
        CompletableFuture<Fetched> done = new CompletableFuture<>();
        gateway.upstream().send(method, path, contentType, body, new Upstream.Answer() {
            @Override
            public void headers(Upstream.Exchange exchange) {
                exchange.readAll((bytes, failure) -> {
                    if (bytes == null) {
                        done.completeExceptionally(failure != null ? failure : new IOException("no body"));
                    } else {
                        done.complete(new Fetched(exchange.status(), exchange.header("Content-Type"), bytes));
                    }
                });
            }

            @Override
            public void failed(Upstream.Failure failure) {
                done.completeExceptionally(failure);
            }
        });
        try {
            return done.get(gateway.config().limits().firstByteTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (response != null) {
                if (cause instanceof Upstream.Failure failure) {
                    failure.answer(Protocol.OPENAI, response);
                } else {
                    ApiErrors.write(
                            Protocol.OPENAI,
                            response,
                            502,
                            "upstream_error",
                            "upstream_broken",
                            null,
                            "The upstream's answer broke off: " + cause.getMessage());
                }
            }
            return null;
        }
    }

    private static void relay(Fetched fetched, HttpServletResponse response) throws IOException {
        OpenAi.write(
                response,
                fetched.status(),
                fetched.contentType() == null ? "application/json" : fetched.contentType(),
                fetched.body());
    }
}
