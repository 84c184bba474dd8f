package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Anthropic's Message Batches ({@code /v1/messages/batches}) as the fake serves them: batches that
 * stay {@code in_progress} until the test ends them ({@link #succeed}, {@link #end}), results kept
 * in memory.
 */
public final class AnthropicBatches {

    private static final String PATH = "/v1/messages/batches";

    private final Map<String, ObjectNode> batches = new ConcurrentHashMap<>();
    private final Map<String, JsonNode> requests = new ConcurrentHashMap<>();
    private final Map<String, String> results = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    AnthropicBatches() {}

    /** Answers a call under {@code /v1/messages/batches}; {@code false} for any other path. */
    boolean serve(Call call, Exchange exchange) throws IOException {
        String path = call.path();
        if (!path.equals(PATH) && !path.startsWith(PATH + "/")) {
            return false;
        }
        String method = call.method();
        if (path.equals(PATH) && method.equals("POST")) {
            String id = "msgbatch_" + ids.incrementAndGet();
            ObjectNode batch = Json.object()
                    .put("id", id)
                    .put("type", "message_batch")
                    .put("processing_status", "in_progress")
                    .put("created_at", "2030-01-01T00:00:00Z")
                    .put("expires_at", "2030-01-02T00:00:00Z")
                    .putNull("ended_at")
                    .putNull("archived_at")
                    .putNull("cancel_initiated_at")
                    .putNull("results_url");
            counts(batch, call.body().path("requests").size(), 0, 0, 0, 0);
            batches.put(id, batch);
            requests.put(id, call.body().path("requests"));
            exchange.json(200, batch);
            return true;
        }
        if (path.equals(PATH)) {
            ObjectNode page = Json.object().put("has_more", false);
            ArrayNode data = page.putArray("data");
            batches.values().forEach(data::add);
            page.putNull("first_id").putNull("last_id");
            exchange.json(200, page);
            return true;
        }
        String[] parts = path.substring(PATH.length() + 1).split("/");
        ObjectNode batch = batches.get(parts[0]);
        if (batch == null) {
            exchange.json(404, notFound("no batch " + parts[0]));
        } else if (parts.length == 2 && parts[1].equals("cancel")) {
            if (!batch.path("processing_status").asText().equals("ended")) {
                batch.put("processing_status", "canceling").put("cancel_initiated_at", "2030-01-01T00:01:00Z");
            }
            exchange.json(200, batch);
        } else if (parts.length == 2 && parts[1].equals("results")) {
            String lines = results.get(parts[0]);
            if (lines == null) {
                exchange.json(404, notFound("no results yet"));
            } else {
                exchange.write(200, "application/binary", lines.getBytes(StandardCharsets.UTF_8));
            }
        } else if (method.equals("DELETE")) {
            batches.remove(parts[0]);
            results.remove(parts[0]);
            exchange.json(200, Json.object().put("id", parts[0]).put("type", "message_batch_deleted"));
        } else {
            exchange.json(200, batch);
        }
        return true;
    }

    private static ObjectNode notFound(String message) {
        return Failure.status(404).message(message).body(Api.Provider.ANTHROPIC);
    }

    /**
     * Ends a batch with every request succeeded, each answered {@code ok} with this usage.
     *
     * @param id the batch's id
     * @param usage each answer's usage
     * @throws IllegalArgumentException if there is no such batch
     */
    public void succeed(String id, Usage usage) {
        int count = end(
                id,
                (request, result) -> result.put("type", "succeeded")
                        .set(
                                "message",
                                AnthropicAnswers.message(
                                        "msg_" + id + "_"
                                                + request.path("custom_id").asText(),
                                        request.path("params").path("model").asText(),
                                        "ok",
                                        "end_turn",
                                        usage)));
        counts(Objects.requireNonNull(batches.get(id)), 0, count, 0, 0, 0);
    }

    /**
     * Ends a batch with every request's result of {@code type}.
     *
     * @param id the batch's id
     * @param type {@code canceled}, {@code expired} or {@code errored}
     * @throws IllegalArgumentException if there is no such batch
     */
    public void end(String id, String type) {
        int count = end(id, (request, result) -> {
            result.put("type", type);
            if (type.equals("errored")) {
                result.set(
                        "error",
                        Failure.status(400).message("the fake refuses it").body(Api.Provider.ANTHROPIC));
            }
        });
        counts(
                Objects.requireNonNull(batches.get(id)),
                0,
                0,
                type.equals("errored") ? count : 0,
                type.equals("canceled") ? count : 0,
                type.equals("expired") ? count : 0);
    }

    /** Ends a batch with one result line per request, filled by {@code result}; returns how many. */
    private int end(String id, BiConsumer<JsonNode, ObjectNode> result) {
        JsonNode batchRequests = requests.get(id);
        if (batchRequests == null || !batches.containsKey(id)) {
            throw new IllegalArgumentException("no batch " + id);
        }
        StringBuilder lines = new StringBuilder();
        int count = 0;
        for (JsonNode request : batchRequests) {
            ObjectNode line =
                    Json.object().put("custom_id", request.path("custom_id").asText());
            result.accept(request, line.putObject("result"));
            lines.append(line).append('\n');
            count++;
        }
        results.put(id, lines.toString());
        Objects.requireNonNull(batches.get(id))
                .put("processing_status", "ended")
                .put("ended_at", "2030-01-01T01:00:00Z")
                .put("results_url", "https://api.anthropic.com/v1/messages/batches/" + id + "/results");
        return count;
    }

    private static void counts(
            ObjectNode batch, int processing, int succeeded, int errored, int canceled, int expired) {
        batch.putObject("request_counts")
                .put("processing", processing)
                .put("succeeded", succeeded)
                .put("errored", errored)
                .put("canceled", canceled)
                .put("expired", expired);
    }
}
