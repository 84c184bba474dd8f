package dev.ratelimit.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * OpenAI's files and batches as {@link StubUpstream} serves them: uploads kept in memory, batches
 * that stay where they are until the test moves them ({@link #complete}, {@link #end}).
 */
final class BatchStub {

    private final Map<String, String> files = new ConcurrentHashMap<>();
    private final Map<String, ObjectNode> batches = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger();

    /** Answers a request under {@code /v1/files} or {@code /v1/batches}; {@code false} for any other path. */
    boolean serve(HttpServletRequest request, byte[] bytes, HttpServletResponse response) throws IOException {
        String path = request.getRequestURI();
        String method = request.getMethod();
        if (path.equals("/v1/files") && method.equals("POST")) {
            String id = "file-" + ids.incrementAndGet();
            files.put(id, upload(request.getContentType(), new String(bytes, StandardCharsets.UTF_8)));
            return write(response, file(id));
        }
        if (path.startsWith("/v1/files/")) {
            String[] parts = path.substring("/v1/files/".length()).split("/");
            String content = files.get(parts[0]);
            if (content == null) {
                response.setStatus(404);
                return true;
            }
            if (parts.length == 2) {
                response.setContentType("application/jsonl");
                response.getOutputStream().write(content.getBytes(StandardCharsets.UTF_8));
                return true;
            }
            return write(response, file(parts[0]));
        }
        if (path.equals("/v1/batches") && method.equals("POST")) {
            JsonNode body = OpenAi.JSON.readTree(bytes);
            ObjectNode batch = OpenAi.JSON
                    .createObjectNode()
                    .put("id", "batch_" + ids.incrementAndGet())
                    .put("object", "batch")
                    .put("endpoint", body.path("endpoint").asText())
                    .put("input_file_id", body.path("input_file_id").asText())
                    .put("completion_window", "24h")
                    .put("status", "validating")
                    .put("created_at", 1_700_000_000L);
            batches.put(batch.get("id").asText(), batch);
            return write(response, batch);
        }
        if (path.equals("/v1/batches")) {
            ObjectNode page =
                    OpenAi.JSON.createObjectNode().put("object", "list").put("has_more", false);
            ArrayNode data = page.putArray("data");
            batches.values().forEach(data::add);
            return write(response, page);
        }
        if (path.startsWith("/v1/batches/")) {
            String[] parts = path.substring("/v1/batches/".length()).split("/");
            ObjectNode batch = batches.get(parts[0]);
            if (batch == null) {
                response.setStatus(404);
                return true;
            }
            if (parts.length == 2 && parts[1].equals("cancel")) {
                batch.put("status", "cancelling");
            }
            return write(response, batch);
        }
        return false;
    }

    /** Completes a batch: each of its input lines answered with the given usage, in one output file. */
    void complete(String batchId, long promptTokens, long completionTokens) {
        ObjectNode batch = batches.get(batchId);
        StringBuilder output = new StringBuilder();
        for (String line : files.get(batch.get("input_file_id").asText()).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode result = OpenAi.JSON.createObjectNode();
            result.put("custom_id", readTree(line).path("custom_id").asText());
            ObjectNode usage = result.putObject("response")
                    .put("status_code", 200)
                    .putObject("body")
                    .putObject("usage");
            usage.put("prompt_tokens", promptTokens)
                    .put("completion_tokens", completionTokens)
                    .put("total_tokens", promptTokens + completionTokens);
            output.append(result).append('\n');
        }
        String outputId = "file-" + ids.incrementAndGet();
        files.put(outputId, output.toString());
        batch.put("output_file_id", outputId);
        end(batchId, "completed");
    }

    /** Moves a batch to {@code status} (such as {@code in_progress}, {@code expired} or {@code cancelled}). */
    void end(String batchId, String status) {
        batches.get(batchId).put("status", status);
    }

    private static JsonNode readTree(String line) {
        try {
            return OpenAi.JSON.readTree(line);
        } catch (IOException e) {
            throw new IllegalArgumentException(line, e);
        }
    }

    private ObjectNode file(String id) {
        return OpenAi.JSON
                .createObjectNode()
                .put("id", id)
                .put("object", "file")
                .put("bytes", files.get(id).length())
                .put("created_at", 1_700_000_000L)
                .put("filename", "batch.jsonl")
                .put("purpose", "batch")
                .put("status", "processed");
    }

    /** The part named {@code file} of a multipart upload. */
    private static String upload(String contentType, String body) {
        String boundary = contentType
                .substring(contentType.indexOf("boundary=") + "boundary=".length())
                .replace("\"", "");
        for (String part : body.split("--" + boundary)) {
            if (part.contains("name=\"file\"")) {
                String content = part.substring(part.indexOf("\r\n\r\n") + 4);
                return content.endsWith("\r\n") ? content.substring(0, content.length() - 2) : content;
            }
        }
        throw new IllegalArgumentException("no file part in the upload");
    }

    private static boolean write(HttpServletResponse response, JsonNode json) throws IOException {
        response.setContentType("application/json");
        response.getOutputStream().write(OpenAi.JSON.writeValueAsBytes(json));
        return true;
    }
}
