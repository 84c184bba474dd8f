package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.anthropic.Anthropic;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Anthropic's Message Batches as {@link AnthropicStub} serves them: batches that stay {@code
 * in_progress} until the test ends them ({@link #succeed}, {@link #end}), results kept in memory.
 */
final class AnthropicBatchStub {

    private static final String PATH = "/v1/messages/batches";

    private final Map<String, ObjectNode> batches = new ConcurrentHashMap<>();
    private final Map<String, JsonNode> requests = new ConcurrentHashMap<>();
    private final Map<String, String> results = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    /** Answers a request under {@code /v1/messages/batches}; {@code false} for any other path. */
    boolean serve(String method, String path, JsonNode body, HttpServletResponse response) throws IOException {
        if (!path.equals(PATH) && !path.startsWith(PATH + "/")) {
            return false;
        }
        if (path.equals(PATH) && method.equals("POST")) {
            String id = "msgbatch_" + ids.incrementAndGet();
            ObjectNode batch = OpenAi.JSON
                    .createObjectNode()
                    .put("id", id)
                    .put("type", "message_batch")
                    .put("processing_status", "in_progress")
                    .put("created_at", "2030-01-01T00:00:00Z")
                    .put("expires_at", "2030-01-02T00:00:00Z")
                    .putNull("ended_at")
                    .putNull("archived_at")
                    .putNull("cancel_initiated_at")
                    .putNull("results_url");
            counts(batch, body.path("requests").size(), 0, 0, 0, 0);
            batches.put(id, batch);
            requests.put(id, body.path("requests"));
            return write(response, 200, batch);
        }
        if (path.equals(PATH)) {
            ObjectNode page = OpenAi.JSON.createObjectNode().put("has_more", false);
            ArrayNode data = page.putArray("data");
            batches.values().forEach(data::add);
            page.putNull("first_id").putNull("last_id");
            return write(response, 200, page);
        }
        String[] parts = path.substring(PATH.length() + 1).split("/");
        ObjectNode batch = batches.get(parts[0]);
        if (batch == null) {
            return write(response, 404, Anthropic.errorBody("not_found_error", "no batch " + parts[0]));
        }
        if (parts.length == 2 && parts[1].equals("cancel")) {
            if (!batch.path("processing_status").asText().equals("ended")) {
                batch.put("processing_status", "canceling").put("cancel_initiated_at", "2030-01-01T00:01:00Z");
            }
            return write(response, 200, batch);
        }
        if (parts.length == 2 && parts[1].equals("results")) {
            String lines = results.get(parts[0]);
            if (lines == null) {
                return write(response, 404, Anthropic.errorBody("not_found_error", "no results yet"));
            }
            response.setContentType("application/binary");
            response.getOutputStream().write(lines.getBytes(StandardCharsets.UTF_8));
            return true;
        }
        if (method.equals("DELETE")) {
            batches.remove(parts[0]);
            results.remove(parts[0]);
            return write(
                    response,
                    200,
                    OpenAi.JSON.createObjectNode().put("id", parts[0]).put("type", "message_batch_deleted"));
        }
        return write(response, 200, batch);
    }

    /** Ends a batch with every request succeeded, each with this usage: fresh input, cache reads, cache writes, output. */
    void succeed(String id, long input, long cacheRead, long cacheWrite, long output) {
        int count = end(
                id,
                (request, result) -> result.put("type", "succeeded")
                        .set(
                                "message",
                                AnthropicStub.message(
                                        request.path("params").path("model").asText(),
                                        "ok",
                                        input,
                                        cacheRead,
                                        cacheWrite,
                                        output)));
        counts(batches.get(id), 0, count, 0, 0, 0);
    }

    /** Ends a batch with every request's result of {@code type}: {@code canceled}, {@code expired} or {@code errored}. */
    void end(String id, String type) {
        int count = end(id, (request, result) -> {
            result.put("type", type);
            if (type.equals("errored")) {
                result.set("error", Anthropic.errorBody("invalid_request_error", "stub refuses it"));
            }
        });
        counts(
                batches.get(id),
                0,
                0,
                type.equals("errored") ? count : 0,
                type.equals("canceled") ? count : 0,
                type.equals("expired") ? count : 0);
    }

    /** Ends a batch with one result line per request, filled by {@code result}; returns how many. */
    private int end(String id, java.util.function.BiConsumer<JsonNode, ObjectNode> result) {
        StringBuilder lines = new StringBuilder();
        int count = 0;
        for (JsonNode request : requests.get(id)) {
            ObjectNode line = OpenAi.JSON
                    .createObjectNode()
                    .put("custom_id", request.path("custom_id").asText());
            result.accept(request, line.putObject("result"));
            lines.append(line).append('\n');
            count++;
        }
        ended(id, lines.toString());
        return count;
    }

    private void ended(String id, String lines) {
        results.put(id, lines);
        batches.get(id)
                .put("processing_status", "ended")
                .put("ended_at", "2030-01-01T01:00:00Z")
                .put("results_url", "https://api.anthropic.com/v1/messages/batches/" + id + "/results");
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

    private static boolean write(HttpServletResponse response, int status, JsonNode json) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.getOutputStream().write(OpenAi.JSON.writeValueAsBytes(json));
        return true;
    }
}
