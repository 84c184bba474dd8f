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
import org.jspecify.annotations.Nullable;

/**
 * OpenAI's files and batches ({@code /v1/files}, {@code /v1/batches}) as the fake serves them:
 * uploads kept in memory, batches that stay where they are until the test moves them ({@link
 * #complete}, {@link #end}).
 */
public final class OpenAiBatches {

    private final Map<String, String> files = new ConcurrentHashMap<>();
    private final Map<String, ObjectNode> batches = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    OpenAiBatches() {}

    /** Answers a call under {@code /v1/files} or {@code /v1/batches}; {@code false} for any other path. */
    boolean serve(Call call, Exchange exchange) throws IOException {
        String path = call.path();
        String method = call.method();
        if (path.equals("/v1/files") && method.equals("POST")) {
            String content = upload(Objects.requireNonNullElse(call.header("Content-Type"), ""), call.text());
            if (content == null) {
                // OpenAI's answer to an upload without its file: a 400, never a server error
                exchange.json(
                        400,
                        Failure.status(400)
                                .message("Missing the 'file' part of the upload.")
                                .type("invalid_request_error")
                                .body(Api.Provider.OPENAI));
                return true;
            }
            String id = "file-" + ids.incrementAndGet();
            files.put(id, content);
            exchange.json(200, file(id));
            return true;
        }
        if (path.startsWith("/v1/files/")) {
            String[] parts = path.substring("/v1/files/".length()).split("/");
            String content = files.get(parts[0]);
            if (content == null) {
                exchange.json(
                        404,
                        Failure.status(404).message("No file " + parts[0] + ".").body(Api.Provider.OPENAI));
            } else if (parts.length == 2) {
                exchange.write(200, "application/jsonl", content.getBytes(StandardCharsets.UTF_8));
            } else {
                exchange.json(200, file(parts[0]));
            }
            return true;
        }
        if (path.equals("/v1/batches") && method.equals("POST")) {
            JsonNode body = call.body();
            ObjectNode batch = Json.object()
                    .put("id", "batch_" + ids.incrementAndGet())
                    .put("object", "batch")
                    .put("endpoint", body.path("endpoint").asText())
                    .put("input_file_id", body.path("input_file_id").asText())
                    .put("completion_window", "24h")
                    .put("status", "validating")
                    .put("created_at", 1_700_000_000L);
            batches.put(batch.get("id").asText(), batch);
            exchange.json(200, batch);
            return true;
        }
        if (path.equals("/v1/batches")) {
            ObjectNode page = Json.object().put("object", "list").put("has_more", false);
            ArrayNode data = page.putArray("data");
            batches.values().forEach(data::add);
            exchange.json(200, page);
            return true;
        }
        if (path.startsWith("/v1/batches/")) {
            String[] parts = path.substring("/v1/batches/".length()).split("/");
            ObjectNode batch = batches.get(parts[0]);
            if (batch == null) {
                exchange.json(
                        404,
                        Failure.status(404)
                                .message("No batch " + parts[0] + ".")
                                .body(Api.Provider.OPENAI));
                return true;
            }
            if (parts.length == 2 && parts[1].equals("cancel")) {
                batch.put("status", "cancelling");
            }
            exchange.json(200, batch);
            return true;
        }
        return false;
    }

    /**
     * Completes a batch: each line of its input answered with this usage, in one output file.
     *
     * @param batchId the batch's id
     * @param promptTokens each answer's prompt tokens
     * @param completionTokens each answer's completion tokens
     * @throws IllegalArgumentException if there is no such batch
     */
    public void complete(String batchId, long promptTokens, long completionTokens) {
        ObjectNode batch = batch(batchId);
        StringBuilder output = new StringBuilder();
        for (String line : Objects.requireNonNullElse(
                        files.get(batch.get("input_file_id").asText()), "")
                .split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode result = Json.object();
            result.put("custom_id", readTree(line).path("custom_id").asText());
            result.putObject("response")
                    .put("status_code", 200)
                    .putObject("body")
                    .set("usage", OpenAiAnswers.usage(Usage.of(promptTokens, completionTokens)));
            output.append(result).append('\n');
        }
        String outputId = "file-" + ids.incrementAndGet();
        files.put(outputId, output.toString());
        batch.put("output_file_id", outputId);
        end(batchId, "completed");
    }

    /**
     * Moves a batch to {@code status}, such as {@code in_progress}, {@code expired} or {@code cancelled}.
     *
     * @param batchId the batch's id
     * @param status its new status
     * @throws IllegalArgumentException if there is no such batch
     */
    public void end(String batchId, String status) {
        batch(batchId).put("status", status);
    }

    private ObjectNode batch(String batchId) {
        ObjectNode batch = batches.get(batchId);
        if (batch == null) {
            throw new IllegalArgumentException("no batch " + batchId);
        }
        return batch;
    }

    private static JsonNode readTree(String line) {
        try {
            return Json.MAPPER.readTree(line);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON: " + line, e);
        }
    }

    private ObjectNode file(String id) {
        return Json.object()
                .put("id", id)
                .put("object", "file")
                .put("bytes", Objects.requireNonNullElse(files.get(id), "").length())
                .put("created_at", 1_700_000_000L)
                .put("filename", "batch.jsonl")
                .put("purpose", "batch")
                .put("status", "processed");
    }

    /** The part named {@code file} of a multipart upload. */
    private static @Nullable String upload(String contentType, String body) {
        if (!contentType.contains("boundary=")) {
            return null;
        }
        String boundary = contentType
                .substring(contentType.indexOf("boundary=") + "boundary=".length())
                .replace("\"", "");
        for (String part : body.split("--" + boundary)) {
            if (part.contains("name=\"file\"")) {
                String content = part.substring(part.indexOf("\r\n\r\n") + 4);
                return content.endsWith("\r\n") ? content.substring(0, content.length() - 2) : content;
            }
        }
        return null;
    }
}
