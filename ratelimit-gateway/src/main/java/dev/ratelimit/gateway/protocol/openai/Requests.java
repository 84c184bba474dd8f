package dev.ratelimit.gateway.protocol.openai;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.protocol.BadRequest;
import dev.ratelimit.gateway.protocol.Endpoint;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Locale;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Reads and validates the JSON bodies of the token-metered endpoints (chat, legacy completions,
 * embeddings, responses), so that bad input is refused with a 4xx before any budget is touched.
 */
public final class Requests {

    /** How much of a body over the limit is still read (and dropped) before the 413 is answered. */
    static final long DRAIN_BYTES = 1 << 20;

    private Requests() {}

    /** A validated chat completion request. */
    record Chat(
            ObjectNode body, String model, boolean stream, boolean clientWantsUsage, long maxCompletionTokens, int n) {}

    /** A validated embeddings request. */
    record Embeddings(ObjectNode body, String model) {}

    /**
     * A validated legacy completions request.
     *
     * @param prompts how many prompts {@code prompt} holds (each gets {@code max(n, best_of)} completions)
     * @param choices completions generated per prompt: {@code best_of}, else {@code n}
     */
    record Completions(
            ObjectNode body,
            String model,
            boolean stream,
            boolean clientWantsUsage,
            long maxTokens,
            int prompts,
            int choices) {}

    /**
     * A validated Responses API request.
     *
     * @param serverState whether the upstream adds context the body does not hold ({@code
     *     previous_response_id}, {@code conversation}, a stored {@code prompt}), which no local count sees
     */
    record Responses(ObjectNode body, String model, boolean stream, long maxOutputTokens, boolean serverState) {}

    /**
     * A body read without blocking: its bytes, or the refusal it earned (a content type that is not
     * JSON, or more than the limit) once what could be read of it was read and dropped.
     *
     * @param bytes the body, empty when refused
     * @param refused the 413 or 415 to answer, or {@code null}
     * @param ended whether the whole body was read (a refused one may be cut off after {@link
     *     #DRAIN_BYTES} more: its connection cannot serve another request)
     */
    public record Body(byte[] bytes, @Nullable BadRequest refused, boolean ended) {}

    /**
     * Reads a metered request's body with the servlet API's non-blocking input, on whichever of the
     * server's threads the bytes arrive: a JSON content type (or none; another is 415 once its body
     * was dropped), at most {@code maxBytes} (413, checked on {@code Content-Length} and while
     * reading; up to {@link #DRAIN_BYTES} more are read and dropped first, see {@link #bytes}). The
     * request must be in asynchronous mode.
     *
     * @param then gets the body, on the thread that read its end
     * @param failed gets the failure of a client that went away while sending it
     */
    public static void readAsync(
            HttpServletRequest request, int maxBytes, Consumer<Body> then, Consumer<Throwable> failed) {
        BadRequest refused = null;
        int keep = maxBytes;
        try {
            String contentType = request.getContentType();
            if (contentType != null) {
                String mediaType = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
                if (!mediaType.equals("application/json")) {
                    refused = new BadRequest(
                            415,
                            "unsupported_content_type",
                            null,
                            "Unsupported Content-Type '" + contentType + "': send the body as application/json.");
                }
            }
        } catch (IllegalArgumentException e) { // UnsupportedCharsetException, IllegalCharsetNameException
            refused = new BadRequest(
                    415,
                    "unsupported_content_type",
                    null,
                    "Unsupported charset in Content-Type: send the body as application/json in UTF-8.");
        }
        long declared = request.getContentLengthLong();
        if (refused == null && declared > maxBytes) {
            refused = tooLarge(maxBytes, null);
            if (declared - maxBytes > DRAIN_BYTES) {
                then.accept(new Body(new byte[0], refused, false)); // too much to drop: the connection closes
                return;
            }
        }
        if (refused != null) {
            keep = 0;
        }
        try {
            ServletInputStream in = request.getInputStream();
            in.setReadListener(new BodyReader(in, keep, refused, maxBytes, declared, then, failed));
        } catch (IOException | RuntimeException e) {
            failed.accept(e);
        }
    }

    /** Reads a body as it arrives, keeping up to a limit and dropping up to {@link #DRAIN_BYTES} more. */
    private static final class BodyReader implements ReadListener {
        private final ServletInputStream in;
        private final int keep;
        private final int maxBytes;
        private final Consumer<Body> then;
        private final Consumer<Throwable> failed;
        private final ByteArrayOutputStream bytes;
        private final byte[] buffer;
        private @Nullable BadRequest refused;
        private long dropped;
        private boolean done;

        BodyReader(
                ServletInputStream in,
                int keep,
                @Nullable BadRequest refused,
                int maxBytes,
                long declared,
                Consumer<Body> then,
                Consumer<Throwable> failed) {
            this.in = in;
            this.keep = keep;
            this.refused = refused;
            this.maxBytes = maxBytes;
            this.then = then;
            this.failed = failed;
            this.bytes = new ByteArrayOutputStream(declared > 0 && declared <= keep ? (int) declared : 1024);
            // a body of a known small length is read in one piece of its size, not through 8 KB
            this.buffer = new byte[declared > 0 && declared < 8192 ? (int) declared : 8192];
        }

        @Override
        public void onDataAvailable() throws IOException {
            while (!done && in.isReady() && !in.isFinished()) {
                int read = in.read(buffer);
                if (read < 0) {
                    return; // onAllDataRead follows
                }
                if (refused == null && bytes.size() + read <= keep) {
                    bytes.write(buffer, 0, read);
                    continue;
                }
                if (refused == null) {
                    refused = tooLarge(maxBytes, null);
                    bytes.reset();
                }
                dropped += read;
                if (dropped > DRAIN_BYTES) {
                    done = true; // more than is worth reading: the connection closes after the answer
                    then.accept(new Body(new byte[0], refused, false));
                    return;
                }
            }
        }

        @Override
        public void onAllDataRead() {
            if (!done) {
                done = true;
                BadRequest refusal = refused;
                then.accept(new Body(refusal == null ? bytes.toByteArray() : new byte[0], refusal, true));
            }
        }

        @Override
        public void onError(Throwable failure) {
            if (!done) {
                done = true;
                failed.accept(failure);
            }
        }
    }

    /**
     * The body to send upstream: the bytes the client sent when the endpoint left the body as it was
     * and they are UTF-8 without a byte-order mark (the parser also reads UTF-16 and UTF-32, which
     * the upstream is not told of), otherwise the parsed body written out as UTF-8.
     */
    public static byte[] forwarded(Endpoint.Call call, byte[] sent) throws IOException {
        if (!call.rewritten() && utf8(sent)) {
            return sent;
        }
        return OpenAi.JSON.writeValueAsBytes(call.body());
    }

    /**
     * Whether a body that parsed as JSON is UTF-8 without a byte-order mark: JSON opens with an
     * ASCII character, so a first byte above 0x7F is a mark and a zero among the first four bytes
     * is UTF-16 or UTF-32 (the encoding detection of RFC 4627).
     */
    private static boolean utf8(byte[] bytes) {
        if (bytes.length == 0 || bytes[0] < 0) {
            return false;
        }
        for (int i = 0; i < Math.min(4, bytes.length); i++) {
            if (bytes[i] == 0) {
                return false;
            }
        }
        return true;
    }

    /** Reads a body's JSON: one JSON object, not empty. */
    public static ObjectNode json(byte[] bytes) throws BadRequest {
        if (bytes.length == 0) {
            throw BadRequest.invalid(null, "The request body is empty: send a JSON object.");
        }
        JsonNode root;
        try {
            root = OpenAi.JSON.readTree(bytes);
        } catch (JacksonException e) {
            throw new BadRequest(
                    400,
                    "invalid_json",
                    null,
                    "We could not parse the JSON body of your request: " + jsonProblem(e) + ". Send one JSON object.");
        } catch (IOException e) {
            throw BadRequest.invalid(null, "The request body could not be read.");
        }
        if (!(root instanceof ObjectNode object)) {
            throw BadRequest.invalid(null, "The request body must be a JSON object.");
        }
        return object;
    }

    /**
     * The request's {@code Content-Type}, or {@code null}; one naming a charset Java does not know is
     * a 415 (Jetty throws reading it), its body dropped so the connection stays usable.
     *
     * @throws BadRequest for a charset Java does not know
     */
    public static @Nullable String contentType(HttpServletRequest request) throws BadRequest, IOException {
        try {
            return request.getContentType();
        } catch (IllegalArgumentException e) { // UnsupportedCharsetException, IllegalCharsetNameException
            drop(request.getInputStream());
            throw new BadRequest(
                    415,
                    "unsupported_content_type",
                    null,
                    "Unsupported charset in Content-Type: send the body as application/json in UTF-8.");
        }
    }

    /**
     * Refuses a query string that is not a valid URI query (such as {@code %zz}): it could not be
     * relayed, and is answered 400 before any budget is touched.
     *
     * @throws BadRequest for a query that is not valid
     */
    public static void checkQuery(HttpServletRequest request) throws BadRequest, IOException {
        String query = request.getQueryString();
        if (query == null) {
            return;
        }
        try {
            new java.net.URI("http://localhost/?" + query);
        } catch (java.net.URISyntaxException e) {
            drop(request.getInputStream());
            throw new BadRequest(
                    400,
                    "invalid_request_url",
                    null,
                    "The request URL's query is not valid (percent signs must start %XX escapes).");
        }
    }

    /**
     * What is wrong with a body, in the client's terms: the parser's own message names its classes
     * and limits ({@code StreamReadConstraints}, {@code [Source: ...]}), so it is never passed on.
     */
    private static String jsonProblem(JacksonException e) {
        String where = e.getLocation() == null || e.getLocation().getLineNr() < 1
                ? ""
                : " at line " + e.getLocation().getLineNr() + ", column "
                        + e.getLocation().getColumnNr();
        String original = String.valueOf(e.getOriginalMessage());
        if (e instanceof StreamConstraintsException) {
            return "it is nested more than " + OpenAi.MAX_NESTING_DEPTH + " levels deep" + where;
        }
        if (original.startsWith("Duplicate field")) {
            return "a field appears twice" + where;
        }
        if (original.contains("end-of-input")) {
            return "it ends before the JSON value is complete" + where;
        }
        if (original.contains("Trailing token")) {
            return "more than one JSON value" + where;
        }
        return "it is not valid JSON" + where;
    }

    /**
     * Reads a body of at most {@code maxBytes}, refusing a larger one with 413 before reading it
     * all. Up to {@link #DRAIN_BYTES} more of a refused body are read and dropped first, so that a
     * client still sending it gets the 413 on a connection that has consumed its request, rather
     * than a connection the server closes under it (which it sees as no answer at all).
     */
    public static byte[] bytes(HttpServletRequest request, int maxBytes) throws BadRequest, IOException {
        long declared = request.getContentLengthLong();
        try (InputStream in = request.getInputStream()) {
            if (declared > maxBytes) {
                throw tooLarge(maxBytes, declared - maxBytes <= DRAIN_BYTES ? in : null);
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(declared > 0 ? (int) declared : 1024);
            byte[] buffer = new byte[8192];
            int read;
            while ((read = in.read(buffer)) != -1) {
                if (bytes.size() + read > maxBytes) {
                    throw tooLarge(maxBytes, in);
                }
                bytes.write(buffer, 0, read);
            }
            return bytes.toByteArray();
        }
    }

    static Chat chat(ObjectNode body, long defaultMaxCompletionTokens) throws BadRequest {
        String model = model(body);
        JsonNode messages = body.get("messages");
        if (messages == null || messages.isNull()) {
            throw BadRequest.missing("messages", "Missing required parameter: 'messages'.");
        }
        if (!messages.isArray() || messages.isEmpty()) {
            throw BadRequest.invalid("messages", "'messages' must be a non-empty array of message objects.");
        }
        for (int i = 0; i < messages.size(); i++) {
            JsonNode message = messages.get(i);
            String at = "messages[" + i + "]";
            if (!message.isObject()) {
                throw BadRequest.invalid(at, "'" + at + "' must be an object with a 'role'.");
            }
            if (!message.path("role").isTextual()) {
                throw BadRequest.missing(at + ".role", "'" + at + ".role' must be a string.");
            }
            JsonNode content = message.get("content");
            if (content != null && !content.isNull() && !content.isTextual() && !content.isArray()) {
                throw BadRequest.invalid(
                        at + ".content", "'" + at + ".content' must be a string or an array of content parts.");
            }
        }
        boolean stream = bool(body, "stream");
        boolean clientWantsUsage = clientWantsUsage(body);
        Long maxCompletion = positiveLong(body, "max_completion_tokens");
        Long maxTokens = positiveLong(body, "max_tokens");
        long completion =
                maxCompletion != null ? maxCompletion : maxTokens != null ? maxTokens : defaultMaxCompletionTokens;
        return new Chat(body, model, stream, clientWantsUsage, completion, bounded(body, "n", 128, 1));
    }

    /**
     * Validates a legacy completions request: {@code prompt} a string, strings, token ids or arrays
     * of token ids; {@code max_tokens}, {@code n} and {@code best_of} positive integers with {@code
     * best_of} at least {@code n}.
     */
    static Completions completions(ObjectNode body, long defaultMaxTokens) throws BadRequest {
        String model = model(body);
        JsonNode prompt = body.get("prompt");
        if (prompt == null || prompt.isNull()) {
            throw BadRequest.missing("prompt", "Missing required parameter: 'prompt'.");
        }
        int prompts = 1;
        boolean valid = prompt.isTextual() || (prompt.isArray() && !prompt.isEmpty());
        if (prompt.isArray() && !prompt.path(0).isIntegralNumber()) {
            prompts = prompt.size();
            for (JsonNode item : prompt) {
                valid &= item.isTextual() || (item.isArray() && !item.isEmpty());
            }
        } else if (prompt.isArray()) {
            for (JsonNode item : prompt) {
                valid &= item.isIntegralNumber();
            }
        }
        if (!valid) {
            throw BadRequest.invalid(
                    "prompt", "'prompt' must be a string, a non-empty array of strings, or token arrays.");
        }
        boolean stream = bool(body, "stream");
        Long maxTokens = positiveLong(body, "max_tokens");
        int n = bounded(body, "n", 128, 1);
        int bestOf = bounded(body, "best_of", 20, n);
        if (bestOf < n) {
            throw BadRequest.invalid("best_of", "'best_of' must be at least 'n'.");
        }
        return new Completions(
                body,
                model,
                stream,
                clientWantsUsage(body),
                maxTokens != null ? maxTokens : defaultMaxTokens,
                prompts,
                bestOf);
    }

    /**
     * Validates a Responses API request: {@code input} a string or an array of input items
     * (objects; a message's {@code role} a string and its {@code content} a string or parts),
     * required unless the upstream holds the context ({@code previous_response_id}, {@code
     * conversation}, {@code prompt}); {@code instructions} a string; {@code max_output_tokens} a
     * positive integer.
     */
    static Responses responses(ObjectNode body, long defaultMaxOutputTokens) throws BadRequest {
        String model = model(body);
        JsonNode previous = body.get("previous_response_id");
        if (previous != null
                && !previous.isNull()
                && !(previous.isTextual() && !previous.textValue().isBlank())) {
            throw BadRequest.invalid("previous_response_id", "'previous_response_id' must be a non-empty string.");
        }
        boolean serverState = present(previous) || present(body.get("conversation")) || present(body.get("prompt"));
        JsonNode input = body.get("input");
        if (!present(input) && !serverState) {
            throw BadRequest.missing("input", "Missing required parameter: 'input'.");
        }
        if (present(input) && !input.isTextual() && !input.isArray()) {
            throw BadRequest.invalid("input", "'input' must be a string or an array of input items.");
        }
        if (present(input) && input.isArray()) {
            for (int i = 0; i < input.size(); i++) {
                JsonNode item = input.get(i);
                String at = "input[" + i + "]";
                if (!item.isObject()) {
                    throw BadRequest.invalid(at, "'" + at + "' must be an input item object.");
                }
                if (item.has("role") && !item.path("role").isTextual()) {
                    throw BadRequest.invalid(at + ".role", "'" + at + ".role' must be a string.");
                }
                JsonNode content = item.get("content");
                if (item.has("role") && (content == null || !(content.isTextual() || content.isArray()))) {
                    throw BadRequest.invalid(
                            at + ".content", "'" + at + ".content' must be a string or an array of content parts.");
                }
            }
        }
        JsonNode instructions = body.get("instructions");
        if (present(instructions) && !instructions.isTextual()) {
            throw BadRequest.invalid("instructions", "'instructions' must be a string.");
        }
        boolean stream = bool(body, "stream");
        bool(body, "background");
        Long maxOutput = positiveLong(body, "max_output_tokens");
        return new Responses(body, model, stream, maxOutput != null ? maxOutput : defaultMaxOutputTokens, serverState);
    }

    private static boolean present(@Nullable JsonNode value) {
        return value != null && !value.isNull();
    }

    /** Whether the client asked for a stream's usage chunk; {@code stream_options} must be an object. */
    private static boolean clientWantsUsage(ObjectNode body) throws BadRequest {
        JsonNode options = body.get("stream_options");
        if (options != null && !options.isNull() && !options.isObject()) {
            throw BadRequest.invalid("stream_options", "'stream_options' must be an object.");
        }
        return options != null && options.path("include_usage").asBoolean(false);
    }

    /** A positive integer of at most {@code max}, or {@code otherwise} when absent. */
    private static int bounded(ObjectNode body, String field, int max, int otherwise) throws BadRequest {
        Long value = positiveLong(body, field);
        if (value != null && value > max) {
            throw BadRequest.invalid(field, "'" + field + "' must be at most " + max + ".");
        }
        return value == null ? otherwise : value.intValue();
    }

    static Embeddings embeddings(ObjectNode body) throws BadRequest {
        String model = model(body);
        JsonNode input = body.get("input");
        if (input == null || input.isNull()) {
            throw BadRequest.missing("input", "Missing required parameter: 'input'.");
        }
        boolean valid = input.isTextual() || (input.isArray() && !input.isEmpty());
        if (input.isArray()) {
            for (JsonNode item : input) {
                valid &= item.isTextual() || item.isIntegralNumber() || (item.isArray() && !item.isEmpty());
            }
        }
        if (!valid) {
            throw BadRequest.invalid(
                    "input", "'input' must be a string, a non-empty array of strings, or token arrays.");
        }
        return new Embeddings(body, model);
    }

    private static String model(ObjectNode body) throws BadRequest {
        JsonNode model = body.get("model");
        if (model == null || model.isNull()) {
            throw BadRequest.missing("model", "Missing required parameter: 'model'.");
        }
        if (!model.isTextual() || model.textValue().isBlank()) {
            throw BadRequest.invalid("model", "'model' must be a non-empty string.");
        }
        return model.textValue();
    }

    private static boolean bool(ObjectNode body, String field) throws BadRequest {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return false;
        }
        if (!value.isBoolean()) {
            throw BadRequest.invalid(field, "'" + field + "' must be true or false.");
        }
        return value.booleanValue();
    }

    private static @Nullable Long positiveLong(ObjectNode body, String field) throws BadRequest {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() < 1) {
            throw BadRequest.invalid(field, "'" + field + "' must be a positive integer.");
        }
        return value.longValue();
    }

    /**
     * Reads and drops the body of a request refused without reading it (up to {@link #DRAIN_BYTES}),
     * so that the connection stays usable: a response completed while the client still sends its
     * body would otherwise be followed by Jetty closing the connection, which a client that pooled
     * it sees as no answer to its next request. A larger body closes the connection, said so with
     * {@code Connection: close}.
     */
    public static void drain(HttpServletRequest request, jakarta.servlet.http.HttpServletResponse response) {
        try {
            if (!drop(request.getInputStream())) {
                response.setHeader("Connection", "close");
            }
        } catch (IOException | IllegalStateException e) {
            response.setHeader("Connection", "close");
        }
    }

    /** Drops up to {@link #DRAIN_BYTES}; returns whether the stream ended within them. */
    private static boolean drop(InputStream rest) {
        byte[] buffer = new byte[8192];
        long dropped = 0;
        try {
            int read;
            while ((read = rest.read(buffer)) != -1) {
                dropped += read;
                if (dropped > DRAIN_BYTES) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            return false; // the client went away while sending: the answer is written for nobody, harmlessly
        }
    }

    /** Drops what is left of a refused body, up to {@link #DRAIN_BYTES}; a larger one is cut off. */
    private static BadRequest tooLarge(int maxBytes, @Nullable InputStream rest) {
        if (rest != null) {
            drop(rest);
        }
        return new BadRequest(
                413,
                "request_too_large",
                null,
                "The request body exceeds this gateway's limit of " + maxBytes + " bytes.");
    }
}
