package dev.ratelimit.gateway;

import dev.ratelimit.gateway.UpstreamConfig.Protocol;
import dev.ratelimit.genai.TokenUsage;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * What every provider's batches share, whatever their API: the one admission of a batch's worst
 * case at batch prices, who owns each batch ({@link BatchOwners}), the reservations held until a
 * batch ends, their settlement once (to the usage the provider reports, or given back when nothing
 * was used), the poller that asks the upstream about each held batch, and the upstream's control
 * calls read whole. A provider's servlet ({@link BatchServlet} for OpenAI's Batch API, {@link
 * AnthropicBatchServlet} for Anthropic's Message Batches) reads its own request and result shapes
 * and tells this core, through its {@link Api}, whether a batch ended and what it used.
 *
 * <p>The upstream calls wait (up to twice the first-byte timeout) on the caller's thread: these
 * control calls are few, unlike completions.
 */
final class Batches implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Batches.class.getName());

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

    /** A batch reservation waiting for its batch to end. */
    private record Held(Api api, Admission.Ticket ticket) {}

    private final Gateway gateway;
    private final BatchOwners owners;
    /** The reservations of the batches this process admitted, until they are settled. */
    private final Map<String, Held> reserved = new ConcurrentHashMap<>();

    private final ScheduledExecutorService poller;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Starts polling the batches this process admits every {@code limits.batch-poll-interval-seconds}. */
    Batches(Gateway gateway, BatchOwners owners) {
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

    /** Asks the upstream about each batch this process holds a reservation for, and settles those that ended. */
    private void poll() {
        for (Map.Entry<String, Held> held : List.copyOf(reserved.entrySet())) {
            String id = held.getKey();
            Api api = held.getValue().api();
            try {
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
        GatewayConfig config = gateway.config(request);
        ApiKeyFilter.Account account = ApiKeyFilter.account(request);
        Charge online = Charge.of(config, account, model);
        Charge charge = new Charge(
                online.tenant(),
                online.team(),
                online.model(),
                config.spending().batchPrices().priceOf(model),
                online.cap(),
                levels(online),
                online.unpricedSpend());
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
     * Records a batch the upstream created: {@code tenant} owns it, and its reservation is held until
     * it ends. The reservation is given back when the upstream did not create it: {@code created} is
     * {@code null} or not 2xx.
     *
     * @param id the batch's id, read from a 2xx {@code created}
     */
    void created(Api api, Admission.Ticket ticket, @Nullable Fetched created, @Nullable String id, String tenant) {
        if (created == null || !created.ok() || id == null || id.isEmpty()) {
            ticket.cancel(created == null ? "upstream_unreachable" : "upstream_error");
            return;
        }
        owners.own(BatchOwners.BATCH, id, tenant);
        reserved.put(id, new Held(api, ticket));
    }

    /** Whether {@code tenant} owns the batch {@code id}. */
    boolean owns(String id, String tenant) {
        return owners.owns(BatchOwners.BATCH, id, tenant);
    }

    /** Settles a batch this process reserved once the upstream says it ended: to its results' usage. */
    void settleIfEnded(Api api, String id, Fetched fetched) throws IOException {
        if (!fetched.ok() || !reserved.containsKey(id)) {
            return;
        }
        Ended ended = api.ended(id, fetched);
        if (ended == null) {
            return;
        }
        Held held = reserved.remove(id);
        if (held == null) {
            return; // another request settled it
        }
        if (ended.used().total() == 0) {
            held.ticket().cancel("batch_" + ended.status());
        } else {
            held.ticket().commit(ended.used(), "batch_" + ended.status());
        }
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
                ApiErrors.write(
                        protocol,
                        response,
                        404,
                        "invalid_request_error",
                        "unknown_url",
                        null,
                        "No upstream of the gateway serves this API's batches.");
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
                    failure.answer(protocol, response);
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

    /** Relays an upstream answer read whole. */
    static void relay(Fetched fetched, HttpServletResponse response) throws IOException {
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
