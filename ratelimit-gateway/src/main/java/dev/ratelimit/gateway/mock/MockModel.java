package dev.ratelimit.gateway.mock;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ratelimit.gateway.config.UpstreamConfig.Protocol;
import dev.ratelimit.gateway.protocol.ApiErrors;
import dev.ratelimit.gateway.protocol.gemini.Gemini;
import dev.ratelimit.gateway.protocol.openai.OpenAi;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The built-in model the gateway serves when no {@code UPSTREAM_URL} is set: an OpenAI-compatible
 * server on a private loopback port that answers chat completions and legacy completions (plain and
 * streamed, one chunk per word, with {@code usage} when asked), the Responses API (plain and streamed
 * as typed events, ending {@code response.completed}, or {@code response.incomplete} when {@code
 * max_output_tokens} cuts the reply short), embeddings and the model list, Anthropic's Messages
 * API ({@link AnthropicMock}, plain and streamed) and Google's Gemini API under {@code /v1beta}
 * ({@link GeminiMock}), deterministically and with real token counts. The gateway reaches it over HTTP like any upstream, so the Quickstart runs
 * the same code path as a real deployment.
 */
public final class MockModel implements AutoCloseable {

    static final String MODEL = "ratelimit-mock";
    private static final int MAX_ECHO_CHARS = 60;
    private static final int EMBEDDING_DIMENSIONS = 8;

    private final Server server;
    private final URI baseUrl;

    private MockModel(Server server, URI baseUrl) {
        this.server = server;
        this.baseUrl = baseUrl;
    }

    public static MockModel start(TokenCounter tokens, Collection<String> models, Clock clock) throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("mock-model");
        threads.setDaemon(true);
        Server server = new Server(threads);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.addServlet(new ServletHolder(new Api(tokens, models, clock)), "/v1/*");
        context.addServlet(new ServletHolder(new AnthropicMock()), "/v1/messages"); // Anthropic's protocol
        context.addServlet(new ServletHolder(new GeminiMock(models)), Gemini.PREFIX + "/*"); // Google's
        server.setHandler(context);
        server.start();
        return new MockModel(server, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/v1"));
    }

    /** The base URL, {@code http://127.0.0.1:<port>/v1}. */
    public URI baseUrl() {
        return baseUrl;
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            // shutting down anyway
        }
    }

    /** The reply to the last user message. */
    /**
     * Cuts a reply to at most {@code max} tokens, by whole words, as a model stops at its output
     * limit (the caller reports the reason: {@code length}, {@code max_tokens}, ...).
     */
    static String cut(String reply, long max, java.util.function.ToLongFunction<String> count) {
        StringBuilder kept = new StringBuilder();
        for (String word : reply.split(" ")) {
            String next = kept.length() == 0 ? word : " " + word;
            if (count.applyAsLong(kept + next) > max) {
                break;
            }
            kept.append(next);
        }
        return kept.toString();
    }

    public static String reply(@Nullable String lastUser) {
        if (lastUser == null || lastUser.isBlank()) {
            return "Hello from the ratelimit gateway's mock model.";
        }
        String said = lastUser.strip().replaceAll("\\s+", " ");
        if (said.length() > MAX_ECHO_CHARS) {
            said = said.substring(0, MAX_ECHO_CHARS) + "...";
        }
        return "Mock reply from the ratelimit gateway. You said: \"" + said + "\"";
    }

    /**
     * What the last user text asks of the mock, for trying a client or the gateway against an
     * upstream that misbehaves: {@code [mock:slow]} sends a stream's words {@value #SLOW_MILLIS} ms
     * apart, {@code [mock:break]} drops the connection halfway through a stream, {@code
     * [mock:status=NNN]} answers that status with OpenAI's error body (429 and 503 with {@code
     * retry-after: 2}).
     */
    record Demand(boolean slow, boolean breakOff, int status) {

        static final long SLOW_MILLIS = 200;
        private static final Pattern STATUS = Pattern.compile("\\[mock:status=([1-5][0-9][0-9])]");

        static Demand of(@Nullable String text) {
            if (text == null || !text.contains("[mock:")) {
                return new Demand(false, false, 0);
            }
            Matcher status = STATUS.matcher(text);
            return new Demand(
                    text.contains("[mock:slow]"),
                    text.contains("[mock:break]"),
                    status.find() ? Integer.parseInt(status.group(1)) : 0);
        }

        /** Answers the status asked for, if any; returns whether it did. */
        boolean refuse(HttpServletResponse response) throws IOException {
            if (status == 0) {
                return false;
            }
            if (status == 429 || status == 503) {
                response.setHeader("retry-after", "2");
            }
            ApiErrors.write(
                    Protocol.OPENAI,
                    response,
                    status,
                    "mock_error",
                    "mock_" + status,
                    null,
                    "The mock model answers " + status + " as asked.");
            return true;
        }

        /** Before chunk {@code i} of {@code count}: waits if slow, breaks off halfway if asked. */
        void beat(int i, int count) throws IOException {
            if (breakOff && i == count / 2) {
                throw new IOException("the mock model breaks the stream off as asked");
            }
            if (slow && i > 0) {
                try {
                    Thread.sleep(SLOW_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
            }
        }
    }

    private static final class Api extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final transient TokenCounter tokens;
        private final transient Collection<String> models;
        private final transient Clock clock;
        private final AtomicLong ids = new AtomicLong();

        Api(TokenCounter tokens, Collection<String> models, Clock clock) {
            this.tokens = tokens;
            this.models = models;
            this.clock = clock;
        }

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            String path = request.getPathInfo() == null ? "" : request.getPathInfo();
            String method = request.getMethod();
            if (path.equals("/models") && method.equals("GET")) {
                models(response);
                return;
            }
            if (path.startsWith("/models/") && method.equals("GET")) {
                model(path.substring("/models/".length()), response);
                return;
            }
            JsonNode body;
            try {
                body = OpenAi.JSON.readTree(request.getInputStream());
            } catch (JacksonException e) {
                ApiErrors.write(
                        Protocol.OPENAI, response, 400, "invalid_request_error", "invalid_json", null, "Not JSON.");
                return;
            }
            if (path.equals("/chat/completions") && method.equals("POST")) {
                chat(body, response);
            } else if (path.equals("/completions") && method.equals("POST")) {
                completions(body, response);
            } else if (path.equals("/responses") && method.equals("POST")) {
                responses(body, response);
            } else if (path.equals("/embeddings") && method.equals("POST")) {
                embeddings(body, response);
            } else {
                OpenAi.unknownUrl(response, "The mock model has no " + method + " " + path + ".");
            }
        }

        /** {@code GET /v1/models/{id}}: one model of the list, or OpenAI's 404 for another. */
        private void model(String id, HttpServletResponse response) throws IOException {
            if (!id.equals(MODEL) && !models.contains(id)) {
                ApiErrors.write(
                        Protocol.OPENAI,
                        response,
                        404,
                        "invalid_request_error",
                        "model_not_found",
                        "model",
                        "The model '" + id + "' does not exist.");
                return;
            }
            OpenAi.json(
                    response,
                    200,
                    OpenAi.JSON
                            .createObjectNode()
                            .put("id", id)
                            .put("object", "model")
                            .put("created", 0)
                            .put("owned_by", "ratelimit"));
        }

        private void models(HttpServletResponse response) throws IOException {
            ObjectNode list = OpenAi.JSON.createObjectNode().put("object", "list");
            ArrayNode data = list.putArray("data");
            data.addObject()
                    .put("id", MODEL)
                    .put("object", "model")
                    .put("created", 0)
                    .put("owned_by", "ratelimit");
            for (String model : models) {
                data.addObject()
                        .put("id", model)
                        .put("object", "model")
                        .put("created", 0)
                        .put("owned_by", "ratelimit");
            }
            OpenAi.json(response, 200, list);
        }

        private void chat(JsonNode body, HttpServletResponse response) throws IOException {
            String model = body.path("model").asText(MODEL);
            JsonNode messages = body.path("messages");
            String lastUser = null;
            for (JsonNode message : messages) {
                if (message.path("role").asText().equals("user")
                        && message.path("content").isTextual()) {
                    lastUser = message.path("content").textValue();
                }
            }
            Demand demand = Demand.of(lastUser);
            if (demand.refuse(response)) {
                return;
            }
            long max = body.path("max_completion_tokens")
                    .asLong(body.path("max_tokens").asLong(Long.MAX_VALUE));
            String reply = cut(reply(lastUser), max, said -> tokens.count(model, said));
            String finish = reply.equals(reply(lastUser)) ? "stop" : "length";
            long prompt = tokens.chatPrompt(model, messages);
            long completion = tokens.count(model, reply);
            String id = "chatcmpl-mock-" + ids.incrementAndGet();
            long created = clock.instant().getEpochSecond();
            if (!body.path("stream").asBoolean(false)) {
                ObjectNode answer = head(id, "chat.completion", created, model);
                ObjectNode choice = answer.putArray("choices").addObject().put("index", 0);
                choice.putObject("message").put("role", "assistant").put("content", reply);
                choice.put("finish_reason", finish);
                usage(answer.putObject("usage"), prompt, completion);
                OpenAi.json(response, 200, answer);
                return;
            }
            boolean withUsage =
                    body.path("stream_options").path("include_usage").asBoolean(false);
            ServletOutputStream out = startStream(response);
            String[] words = reply.split(" ");
            for (int i = -1; i <= words.length; i++) {
                demand.beat(i, words.length);
                ObjectNode chunk = chunk(id, created, model, withUsage);
                ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
                ObjectNode delta = choice.putObject("delta");
                if (i == -1) {
                    delta.put("role", "assistant").put("content", "");
                } else if (i < words.length) {
                    delta.put("content", i == 0 ? words[i] : " " + words[i]);
                }
                choice.put("finish_reason", i == words.length ? finish : null);
                event(out, chunk.toString());
            }
            endStream(out, withUsage, chunk(id, created, model, false), prompt, completion);
        }

        /** Ends a chat or completions stream: the usage chunk if asked, then {@code [DONE]}. */
        private static void endStream(
                ServletOutputStream out, boolean withUsage, ObjectNode last, long prompt, long completion)
                throws IOException {
            if (withUsage) {
                last.putArray("choices");
                usage(last.putObject("usage"), prompt, completion);
                event(out, last.toString());
            }
            event(out, "[DONE]");
        }

        private void completions(JsonNode body, HttpServletResponse response) throws IOException {
            String model = body.path("model").asText(MODEL);
            JsonNode prompt = body.path("prompt");
            String said =
                    prompt.isTextual() ? prompt.textValue() : prompt.path(0).asText(null);
            Demand demand = Demand.of(said);
            if (demand.refuse(response)) {
                return;
            }
            long max = body.path("max_tokens").asLong(Long.MAX_VALUE);
            String reply = cut(reply(said), max, text -> tokens.count(model, text));
            String finish = reply.equals(reply(said)) ? "stop" : "length";
            long promptTokens = tokens.completionPrompt(model, prompt);
            long completion = tokens.count(model, reply);
            String id = "cmpl-mock-" + ids.incrementAndGet();
            long created = clock.instant().getEpochSecond();
            if (!body.path("stream").asBoolean(false)) {
                ObjectNode answer = head(id, "text_completion", created, model);
                completionChoice(answer, reply, finish);
                usage(answer.putObject("usage"), promptTokens, completion);
                OpenAi.json(response, 200, answer);
                return;
            }
            ServletOutputStream out = startStream(response);
            String[] words = reply.split(" ");
            for (int i = 0; i <= words.length; i++) {
                demand.beat(i, words.length);
                ObjectNode chunk = head(id, "text_completion", created, model);
                completionChoice(
                        chunk,
                        i < words.length ? (i == 0 ? words[i] : " " + words[i]) : "",
                        i == words.length ? finish : null);
                event(out, chunk.toString());
            }
            endStream(
                    out,
                    body.path("stream_options").path("include_usage").asBoolean(false),
                    head(id, "text_completion", created, model),
                    promptTokens,
                    completion);
        }

        private static void completionChoice(ObjectNode answer, String text, @Nullable String finish) {
            answer.putArray("choices")
                    .addObject()
                    .put("text", text)
                    .put("index", 0)
                    .putNull("logprobs")
                    .put("finish_reason", finish);
        }

        /**
         * {@code POST /v1/responses}: the reply to the last user text, cut to {@code max_output_tokens}
         * (then {@code incomplete}); streamed as the typed events OpenAI sends, one delta per word.
         */
        private void responses(JsonNode body, HttpServletResponse response) throws IOException {
            String model = body.path("model").asText(MODEL);
            JsonNode input = body.path("input");
            String lastUser = input.isTextual() ? input.textValue() : null;
            for (JsonNode item : input) {
                if (item.path("role").asText().equals("user")) {
                    JsonNode content = item.path("content");
                    lastUser = content.isTextual()
                            ? content.textValue()
                            : content.path(0).path("text").asText(null);
                }
            }
            Demand demand = Demand.of(lastUser);
            if (demand.refuse(response)) {
                return;
            }
            long inputTokens = tokens.responsesInput(model, body.get("instructions"), body.get("input"));
            long max = body.path("max_output_tokens").asLong(Long.MAX_VALUE);
            String text = cut(reply(lastUser), max, said -> tokens.count(model, said));
            boolean incomplete = !text.equals(reply(lastUser));
            String id = "resp_mock" + ids.incrementAndGet();
            long created = clock.instant().getEpochSecond();
            ObjectNode done = response(id, created, model, body, incomplete ? "incomplete" : "completed");
            if (incomplete) {
                done.putObject("incomplete_details").put("reason", "max_output_tokens");
            }
            done.withArray("output").add(message(id, text, "completed"));
            long output = tokens.count(model, text);
            ObjectNode usage = done.putObject("usage");
            usage.put("input_tokens", inputTokens);
            usage.putObject("input_tokens_details").put("cached_tokens", 0);
            usage.put("output_tokens", output);
            usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
            usage.put("total_tokens", inputTokens + output);
            if (!body.path("stream").asBoolean(false)) {
                OpenAi.json(response, 200, done);
                return;
            }
            ServletOutputStream out = startStream(response);
            int[] sequence = {0};
            ObjectNode started = response(id, created, model, body, "in_progress");
            typed(out, sequence, "response.created", e -> e.set("response", started));
            typed(out, sequence, "response.in_progress", e -> e.set("response", started));
            String item = "msg_" + id;
            ObjectNode empty = message(id, "", "in_progress");
            empty.putArray("content");
            typed(
                    out,
                    sequence,
                    "response.output_item.added",
                    e -> e.put("output_index", 0).set("item", empty));
            typed(
                    out,
                    sequence,
                    "response.content_part.added",
                    e -> part(e, item).set("part", outputText("")));
            String[] words = text.isEmpty() ? new String[0] : text.split(" ");
            for (int i = 0; i < words.length; i++) {
                demand.beat(i, words.length);
                String word = i == 0 ? words[i] : " " + words[i];
                typed(
                        out,
                        sequence,
                        "response.output_text.delta",
                        e -> part(e, item).put("delta", word).putArray("logprobs"));
            }
            typed(
                    out,
                    sequence,
                    "response.output_text.done",
                    e -> part(e, item).put("text", text).putArray("logprobs"));
            typed(
                    out,
                    sequence,
                    "response.content_part.done",
                    e -> part(e, item).set("part", outputText(text)));
            typed(
                    out,
                    sequence,
                    "response.output_item.done",
                    e -> e.put("output_index", 0).set("item", message(id, text, "completed")));
            typed(
                    out,
                    sequence,
                    incomplete ? "response.incomplete" : "response.completed",
                    e -> e.set("response", done));
        }

        private static ObjectNode response(String id, long created, String model, JsonNode body, String status) {
            ObjectNode answer = OpenAi.JSON
                    .createObjectNode()
                    .put("id", id)
                    .put("object", "response")
                    .put("created_at", created)
                    .put("status", status)
                    .putNull("error")
                    .putNull("incomplete_details");
            answer.set("instructions", body.path("instructions").isTextual() ? body.get("instructions") : null);
            answer.putObject("metadata");
            answer.put("model", model);
            answer.putArray("output");
            answer.put("parallel_tool_calls", true).put("temperature", 1.0).put("tool_choice", "auto");
            answer.putArray("tools");
            answer.put("top_p", 1.0);
            answer.set("previous_response_id", body.get("previous_response_id"));
            answer.set("max_output_tokens", body.get("max_output_tokens"));
            answer.putNull("usage");
            return answer;
        }

        private static ObjectNode message(String id, String text, String status) {
            ObjectNode message = OpenAi.JSON
                    .createObjectNode()
                    .put("id", "msg_" + id)
                    .put("type", "message")
                    .put("status", status)
                    .put("role", "assistant");
            message.putArray("content").add(outputText(text));
            return message;
        }

        private static ObjectNode outputText(String text) {
            ObjectNode part =
                    OpenAi.JSON.createObjectNode().put("type", "output_text").put("text", text);
            part.putArray("annotations");
            return part;
        }

        private static ObjectNode part(ObjectNode event, String item) {
            return event.put("item_id", item).put("output_index", 0).put("content_index", 0);
        }

        /** One typed event: {@code event:} its type, {@code data:} an object with the same {@code type}. */
        private static void typed(
                ServletOutputStream out, int[] sequence, String type, java.util.function.Consumer<ObjectNode> fill)
                throws IOException {
            ObjectNode event = OpenAi.JSON.createObjectNode().put("type", type);
            fill.accept(event);
            event.put("sequence_number", sequence[0]++);
            out.write(("event: " + type + "\ndata: " + event + "\n\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        private static ServletOutputStream startStream(HttpServletResponse response) throws IOException {
            response.setStatus(200);
            response.setContentType("text/event-stream");
            response.setCharacterEncoding("UTF-8");
            return response.getOutputStream();
        }

        private static ObjectNode head(String id, String object, long created, String model) {
            return OpenAi.JSON
                    .createObjectNode()
                    .put("id", id)
                    .put("object", object)
                    .put("created", created)
                    .put("model", model);
        }

        private static ObjectNode chunk(String id, long created, String model, boolean nullUsage) {
            ObjectNode chunk = head(id, "chat.completion.chunk", created, model);
            if (nullUsage) {
                chunk.putNull("usage"); // as OpenAI does on every chunk but the last when usage is asked for
            }
            return chunk;
        }

        private void embeddings(JsonNode body, HttpServletResponse response) throws IOException {
            String model = body.path("model").asText(MODEL);
            JsonNode input = body.path("input");
            ObjectNode answer =
                    OpenAi.JSON.createObjectNode().put("object", "list").put("model", model);
            ArrayNode data = answer.putArray("data");
            int count = input.isArray() && !input.path(0).isIntegralNumber() ? input.size() : 1;
            for (int i = 0; i < count; i++) {
                ObjectNode item = data.addObject().put("object", "embedding").put("index", i);
                ArrayNode vector = item.putArray("embedding");
                int seed = (input.isArray() ? input.get(i) : input).toString().hashCode();
                for (int d = 0; d < EMBEDDING_DIMENSIONS; d++) {
                    vector.add(((seed >>> d) & 0xff) / 255.0);
                }
            }
            long prompt = tokens.embeddingInput(model, input);
            answer.putObject("usage").put("prompt_tokens", prompt).put("total_tokens", prompt);
            OpenAi.json(response, 200, answer);
        }

        private static void usage(ObjectNode usage, long prompt, long completion) {
            usage.put("prompt_tokens", prompt)
                    .put("completion_tokens", completion)
                    .put("total_tokens", prompt + completion);
        }

        private static void event(ServletOutputStream out, String data) throws IOException {
            out.write(("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
    }
}
