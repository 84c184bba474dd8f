package dev.ratelimit.gateway.batch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Settlement;
import dev.ratelimit.gateway.admission.Admission;
import dev.ratelimit.gateway.admission.Charge;
import dev.ratelimit.gateway.config.Account;
import dev.ratelimit.gateway.config.GatewayConfig;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.Endpoint;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.upstream.Upstream;
import dev.ratelimit.gateway.web.Exchange;
import dev.ratelimit.gateway.web.Gateway;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * What every provider's batches share, whatever their API: the one admission of a batch's worst
 * case at batch prices, who owns each batch ({@link BatchOwners}), the reservations held until a
 * batch ends, their settlement once (to the usage the provider reports, or given back when nothing
 * was used), the poller that asks the upstream about each held batch, and the upstream's control
 * calls read whole.
 *
 * <p>A batch's reservation is kept in the store beside its owner, as its receipt ({@link
 * Admission.Ticket#receipt()}) and its charge, so whichever gateway on the store learns that the
 * batch ended (an owner's read, a cancel, its poller) rebuilds and settles it ({@link
 * Admission#restore}), then forgets the record. Gateways settling the same batch at about the same
 * time settle it once: the store applies a settlement of an entry once. Each poller claims a batch
 * in the store for an interval before asking the upstream about it, so one gateway polls it.
 *
 * <p>A provider's servlet ({@link BatchServlet} for OpenAI's Batch API, {@link
 * AnthropicBatchServlet} for Anthropic's Message Batches) reads its own request and result shapes
 * and tells this core, through its {@link Api}, whether a batch ended and what it used.
 *
 * <p>The upstream calls wait (up to twice the first-byte timeout) on the caller's thread: these
 * control calls are few, unlike completions.
 */
public final class Batches implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Batches.class.getName());

    /**
     * How long after a batch's first settlement attempt another may settle it again: well within the
     * time the store remembers a settlement it applied ({@link Settlement#REPEAT_GUARD}), so a
     * settlement repeated (its record could not be deleted) is ignored by the store, never applied
     * twice.
     */
    static final Duration SETTLE_GUARD = Settlement.REPEAT_GUARD.multipliedBy(2).dividedBy(3);

    /** An upstream answer read whole. */
    record Fetched(int status, @Nullable String contentType, byte[] body) {

        boolean ok() {
            return status / 100 == 2;
        }
    }

    /**
     * How a batch ended: the provider's status (such as {@code completed} or {@code ended}) and the
     * tokens its results report, by kind.
     */
    record Ended(String status, TokenUsage used) {}

    /** One provider's batches as the core reads them. */
    interface Api {

        /** The API the batches speak: their upstream and their error shape. */
        Protocol protocol();

        /** Asks the upstream about a batch; {@code null} when it could not be asked. */
        @Nullable
        Fetched fetch(String id) throws IOException;

        /**
         * How a batch the upstream described ended, with its results' usage; {@code null} while it
         * runs, or while its results cannot be read (asked again next time).
         */
        @Nullable
        Ended ended(String id, Fetched batch) throws IOException;
    }

    /**
     * What settles a batch, as its record in the store holds it: the reservation's receipt and what
     * it is charged to and priced at.
     *
     * @param estimate what the batch reserved, for the metrics
     */
    record Held(
            Protocol protocol,
            String tenant,
            @Nullable String team,
            String model,
            @Nullable ModelPrice price,
            Amounts estimate,
            String receipt) {

        String write() {
            ObjectNode node = OpenAi.JSON
                    .createObjectNode()
                    .put("protocol", protocol.name())
                    .put("tenant", tenant)
                    .put("team", team)
                    .put("model", model)
                    .put("tokens", estimate.get(Window.Unit.TOKENS))
                    .put("receipt", receipt);
            if (price != null) {
                node.putArray("price")
                        .add(price.input())
                        .add(price.cachedInput())
                        .add(price.cacheWrite())
                        .add(price.output());
                node.put("micros", estimate.get(Window.Unit.USD_MICROS));
            }
            return node.toString();
        }

        static Held read(String text) throws IOException {
            JsonNode node = OpenAi.JSON.readTree(text);
            JsonNode price = node.get("price");
            Amounts estimate = Amounts.tokens(node.path("tokens").asLong());
            if (price != null) {
                estimate =
                        estimate.and(Window.Unit.USD_MICROS, node.path("micros").asLong());
            }
            return new Held(
                    Protocol.valueOf(node.path("protocol").asText()),
                    node.path("tenant").asText(),
                    node.hasNonNull("team") ? node.get("team").asText() : null,
                    node.path("model").asText(),
                    price == null
                            ? null
                            : new ModelPrice(
                                    price.get(0).decimalValue(),
                                    price.get(1).decimalValue(),
                                    price.get(2).decimalValue(),
                                    price.get(3).decimalValue()),
                    estimate,
                    node.path("receipt").asText());
        }
    }

    private final Gateway gateway;
    private final BatchOwners owners;
    /** Each provider's batches, by the API they speak: how the poller asks about a batch in the store. */
    private final Map<Protocol, Api> apis = new ConcurrentHashMap<>();
    /** The batches this process is settling now: a read and the poller never settle one twice at once. */
    private final Set<String> settling = ConcurrentHashMap.newKeySet();

    private final ScheduledExecutorService poller;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Starts polling the batches this process admits every {@code limits.batch-poll-interval-seconds}. */
    public Batches(Gateway gateway, BatchOwners owners) {
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

    Gateway gateway() {
        return gateway;
    }

    BatchOwners owners() {
        return owners;
    }

    /** Lets the poller ask about the batches {@code api} creates. */
    void register(Api api) {
        apis.put(api.protocol(), api);
    }

    /**
     * Asks the upstream about each batch not settled yet that this process claims for the interval
     * (one gateway per batch and interval), and settles those that ended.
     */
    private void poll() {
        Duration interval = gateway.config().limits().batchPollInterval();
        for (Map.Entry<String, String> held : owners.held().entrySet()) {
            String id = held.getKey();
            try {
                Api api = apis.get(Held.read(held.getValue()).protocol());
                if (api == null || !owners.claim(id, interval)) {
                    continue;
                }
                Fetched batch = api.fetch(id);
                if (batch != null) {
                    settleIfEnded(api, id, batch);
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "polling batch " + id + " failed; it is asked again next time", e);
            }
        }
    }

    /**
     * Admits a batch's worst case in one reservation, at batch prices, answering a refusal in the
     * endpoint's shape; the ticket holds no concurrency slot once admitted (a batch runs for hours).
     *
     * @param endpoint the endpoint whose metric, error shape and advice a refusal uses
     * @param model the one model of the batch's requests
     * @param prompt the requests' counted prompts, summed
     * @param output the most the requests may produce, summed
     * @return the ticket, or {@code null} when the batch was refused (and answered)
     */
    Admission.@Nullable Ticket admit(
            HttpServletRequest request,
            HttpServletResponse response,
            Endpoint endpoint,
            String model,
            long prompt,
            long output)
            throws IOException {
        GatewayConfig config = Exchange.of(request).config();
        Account account = Exchange.of(request).account();
        Charge online = Charge.of(config, account, model);
        Charge charge = new Charge(
                online.tenant(),
                online.team(),
                online.model(),
                config.spending().batchPrices().priceOf(model),
                online.cap(),
                levels(online));
        Endpoint.Call call =
                new Endpoint.Call(model, OpenAi.JSON.createObjectNode(), prompt, prompt + output, false, false);
        Admission.Ticket ticket;
        try {
            ticket = gateway.admit(response, endpoint, account, charge, call, null)
                    .toCompletableFuture()
                    .get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        }
        if (ticket != null) {
            ticket.hold(); // a batch holds no concurrency slot while it runs for hours
        }
        return ticket;
    }

    /**
     * The levels a batch is charged to: a request's, except that a model with a {@code batch-tokens}
     * window has its batches charged to that window in place of its online cap and the tiers' shares
     * of it (the provider limits batches apart from online calls).
     */
    private static List<Charge.Level> levels(Charge online) {
        GatewayConfig.ModelCap cap = online.cap();
        if (cap == null || cap.batchTokens() == null) {
            return online.levels();
        }
        List<Charge.Level> levels = new ArrayList<>();
        for (Charge.Level level : online.levels()) {
            if (!level.kind().equals("upstream") && !level.kind().equals("share")) {
                levels.add(level);
            }
        }
        levels.add(new Charge.Level("batch-tokens", "the batch-tokens limit of " + cap.model(), cap.batchTokens()));
        return List.copyOf(levels);
    }

    /**
     * Creates an admitted batch upstream ({@code POST path} with the client's body) and answers with
     * the upstream's answer: {@code tenant} then owns the batch, and its reservation is recorded in
     * the store until it ends; it is given back when the upstream did not create it.
     */
    void create(
            Api api,
            Admission.Ticket ticket,
            String path,
            byte[] sent,
            Map<String, String> headers,
            HttpServletResponse response,
            String tenant)
            throws IOException {
        Fetched created = call(api.protocol(), "POST", path, "application/json", sent, headers, response);
        String id = created != null && created.ok()
                ? OpenAi.JSON.readTree(created.body()).path("id").asText()
                : null;
        if (created == null || !created.ok() || id == null || id.isEmpty()) {
            ticket.cancel(created == null ? "upstream_unreachable" : "upstream_error");
            relay(created, response);
            return;
        }
        owners.own(BatchOwners.BATCH, id, tenant);
        String receipt = ticket.receipt();
        if (receipt == null) {
            relay(created, response); // the limiter held nothing (disabled, or failing open): nothing to settle
            return;
        }
        Charge charge = ticket.charge();
        Held held = new Held(
                api.protocol(),
                charge.tenant(),
                charge.team() == null ? null : charge.team().name(),
                charge.model(),
                charge.price(),
                ticket.estimate(),
                receipt);
        if (!owners.hold(id, held.write())) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "batch " + id + "'s reservation could not be recorded in the store; it stays charged until its"
                            + " windows pass");
        }
        relay(created, response);
    }

    /** Whether {@code tenant} owns the batch {@code id}. */
    boolean owns(String id, String tenant) {
        return owners.owns(BatchOwners.BATCH, id, tenant);
    }

    /**
     * Settles a batch whose reservation the store holds once the upstream says it ended: to its
     * results' usage, or given back when they used nothing; then forgets the record.
     */
    void settleIfEnded(Api api, String id, Fetched fetched) throws IOException {
        if (!fetched.ok()) {
            return;
        }
        String record = owners.held(id);
        if (record == null || !settling.add(id)) {
            return; // settled already, or being settled here now
        }
        try {
            Ended ended = api.ended(id, fetched);
            if (ended == null) {
                return;
            }
            switch (owners.attempt(id, SETTLE_GUARD)) {
                case UNKNOWN -> {
                    return; // asked again at the next read or poll
                }
                case TOO_LATE -> {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "batch " + id + " was being settled more than " + SETTLE_GUARD.toMinutes() + " minutes"
                                    + " ago and may have been; it is not settled again (it keeps what it was charged)");
                    owners.release(id);
                    return;
                }
                case FIRST, AGAIN -> {
                    // settled below: a second settlement within the guard changes nothing in the store
                }
            }
            Held held = Held.read(record);
            GatewayConfig config = gateway.config();
            Charge charge = new Charge(
                    held.tenant(),
                    held.team() == null ? null : config.spending().teams().get(held.team()),
                    held.model(),
                    held.price(),
                    config.capOf(held.model()),
                    List.of());
            Admission.Ticket ticket = gateway.admission().restore(charge, held.estimate(), held.receipt());
            if (ended.used().total() == 0) {
                ticket.cancel("batch_" + ended.status());
            } else {
                ticket.commit(ended.used(), "batch_" + ended.status());
            }
            owners.release(id);
        } finally {
            settling.remove(id);
        }
    }

    /**
     * The sum, by kind, of the usage {@code usage} reads from each line of a JSONL result file
     * ({@code null} for a line that used nothing billed).
     */
    static TokenUsage sum(byte[] jsonl, Function<JsonNode, @Nullable TokenUsage> usage) throws IOException {
        long input = 0;
        long cached = 0;
        long written = 0;
        long output = 0;
        for (String line : new String(jsonl, StandardCharsets.UTF_8).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            TokenUsage one = usage.apply(OpenAi.JSON.readTree(line));
            if (one != null) {
                input += one.input();
                cached += one.cachedInput();
                written += one.cacheWrite();
                output += one.output();
            }
        }
        return new TokenUsage(input, cached, written, output);
    }

    /** Answers 404 in the protocol's shape for an object the caller does not own (or that does not exist). */
    static void notFound(Protocol protocol, HttpServletResponse response, String kind, String id) throws IOException {
        ApiErrors.write(
                protocol,
                response,
                404,
                "invalid_request_error",
                "not_found",
                null,
                "No " + kind + " with id '" + id + "' found.");
    }

    /**
     * Calls the first upstream of {@code protocol} and reads its answer whole; on failure (or with no
     * upstream of the protocol) answers {@code response}, when given, with the gateway's error in the
     * protocol's shape and returns {@code null}.
     *
     * @param headers headers sent besides the gateway's own, such as {@code anthropic-version}
     */
    @Nullable
    Fetched call(
            Protocol protocol,
            String method,
            String path,
            @Nullable String contentType,
            byte[] body,
            Map<String, String> headers,
            @Nullable HttpServletResponse response)
            throws IOException {
        CompletableFuture<Fetched> done = new CompletableFuture<>();
        Upstream.Answer answer = new Upstream.Answer() {
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
        };
        if (!gateway.upstream().send(protocol, method, path, contentType, body, headers, answer)) {
            if (response != null) {
                ApiErrors.noUpstream(protocol, response, "No upstream of the gateway serves this API's batches.");
            }
            return null;
        }
        try {
            return done.get(gateway.config().limits().firstByteTimeout().toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            if (response != null) {
                if (cause instanceof Upstream.Failure failure) {
                    ApiErrors.upstreamFailed(protocol, response, failure);
                } else {
                    ApiErrors.write(
                            protocol,
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

    /**
     * Answers a list of batches with the caller's page of the upstream's list at {@code path} (with
     * the request's query): the batches {@code tenant} owns in its {@code data}, the rest of the page
     * as it came; an upstream error as it came.
     */
    void list(
            Protocol protocol,
            String path,
            Map<String, String> headers,
            HttpServletRequest request,
            HttpServletResponse response,
            String tenant)
            throws IOException {
        String query = request.getQueryString() == null ? "" : "?" + request.getQueryString();
        Fetched all = call(protocol, "GET", path + query, null, new byte[0], headers, response);
        if (all == null) {
            return;
        }
        if (!all.ok()) {
            relay(all, response);
            return;
        }
        ObjectNode page = (ObjectNode) OpenAi.JSON.readTree(all.body());
        ArrayNode own = OpenAi.JSON.createArrayNode();
        for (JsonNode batch : page.path("data")) {
            if (owns(batch.path("id").asText(), tenant)) {
                own.add(batch);
            }
        }
        page.set("data", own);
        relay(new Fetched(200, "application/json", OpenAi.JSON.writeValueAsBytes(page)), response);
    }

    /** Relays an upstream answer read whole; nothing for {@code null}, a failure {@link #call} answered. */
    static void relay(@Nullable Fetched fetched, HttpServletResponse response) throws IOException {
        if (fetched == null) {
            return;
        }
        OpenAi.write(
                response,
                fetched.status(),
                fetched.contentType() == null ? "application/json" : fetched.contentType(),
                fetched.body());
    }

    /** Stops the poller and closes the owners' Redis connection; a second call does nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            poller.shutdownNow();
            owners.close();
        }
    }
}
