package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** A {@link Reply} in OpenAI's shapes: chat completions, legacy completions, the Responses API, embeddings. */
final class OpenAiAnswers {

    private static final int EMBEDDING_DIMENSIONS = 8;
    private static final String SSE = "text/event-stream";

    private OpenAiAnswers() {}

    static void chat(Reply reply, Call call, Exchange exchange) throws Exception {
        String model = call.model();
        String id = "chatcmpl-" + exchange.id();
        long created = exchange.created();
        String tool = reply.callTools ? toolToCall(call.body()) : null;
        String finish = tool != null ? "tool_calls" : reply.finish == Reply.Finish.LENGTH ? "length" : "stop";
        Usage usage = reply.usage;
        if (!call.stream()) {
            ObjectNode answer = head(id, "chat.completion", created, model);
            ObjectNode choice = answer.putArray("choices").addObject().put("index", 0);
            ObjectNode message = choice.putObject("message").put("role", "assistant");
            if (tool == null) {
                message.put("content", reply.fullText());
            } else {
                message.putNull("content");
                message.set("tool_calls", toolCalls(tool, false));
            }
            choice.put("finish_reason", finish);
            whole(exchange, answer, usage);
            return;
        }
        boolean withUsage = withUsage(call, usage);
        exchange.startStream(SSE);
        reply.stream(exchange, new Reply.Frames() {
            private boolean started;

            @Override
            public void begin() throws IOException {
                if (tool != null) {
                    ObjectNode first = chunk(id, created, model, withUsage, null, false);
                    ObjectNode choice = first.putArray("choices").addObject().put("index", 0);
                    choice.putObject("delta").put("role", "assistant").set("tool_calls", toolCalls(tool, true));
                    choice.putNull("finish_reason");
                    exchange.event(first.toString());
                    started = true;
                }
            }

            @Override
            public void part(int index, String text) throws IOException {
                if (tool == null) {
                    exchange.event(
                            chunk(id, created, model, withUsage, text, !started).toString());
                    started = true;
                }
            }

            @Override
            public void end() throws IOException {
                if (!started) {
                    exchange.event(
                            chunk(id, created, model, withUsage, "", true).toString());
                }
                ObjectNode last = head(id, "chat.completion.chunk", created, model);
                if (withUsage) {
                    last.putNull("usage");
                }
                ObjectNode choice = last.putArray("choices").addObject().put("index", 0);
                choice.putObject("delta");
                choice.put("finish_reason", finish);
                exchange.event(last.toString());
                endStream(exchange, withUsage ? usage : null, head(id, "chat.completion.chunk", created, model));
            }

            @Override
            public void error() throws IOException {
                exchange.event(Failure.status(500).body(Api.Provider.OPENAI).toString());
            }
        });
    }

    static void completions(Reply reply, Call call, Exchange exchange) throws Exception {
        String model = call.model();
        String id = "cmpl-" + exchange.id();
        long created = exchange.created();
        String finish = reply.finish == Reply.Finish.LENGTH ? "length" : "stop";
        Usage usage = reply.usage;
        if (!call.stream()) {
            ObjectNode answer = head(id, "text_completion", created, model);
            completionChoice(answer, reply.fullText(), finish);
            whole(exchange, answer, usage);
            return;
        }
        boolean withUsage = withUsage(call, usage);
        exchange.startStream(SSE);
        reply.stream(exchange, new Reply.Frames() {
            @Override
            public void begin() {}

            @Override
            public void part(int index, String text) throws IOException {
                ObjectNode chunk = head(id, "text_completion", created, model);
                completionChoice(chunk, text, null);
                exchange.event(chunk.toString());
            }

            @Override
            public void end() throws IOException {
                ObjectNode chunk = head(id, "text_completion", created, model);
                completionChoice(chunk, "", finish);
                exchange.event(chunk.toString());
                endStream(exchange, withUsage ? usage : null, head(id, "text_completion", created, model));
            }

            @Override
            public void error() throws IOException {
                exchange.event(Failure.status(500).body(Api.Provider.OPENAI).toString());
            }
        });
    }

    /** Writes a whole answer with its usage, if any. */
    private static void whole(Exchange exchange, ObjectNode answer, @Nullable Usage usage) throws IOException {
        if (usage != null) {
            answer.set("usage", usage(usage));
        }
        exchange.json(200, answer);
    }

    /** Whether a stream ends with a usage chunk: there is a usage, and the call asked for it. */
    private static boolean withUsage(Call call, @Nullable Usage usage) {
        return usage != null
                && call.body().path("stream_options").path("include_usage").asBoolean(false);
    }

    /** The usage chunk if there is one, then {@code [DONE]}. */
    private static void endStream(Exchange exchange, @Nullable Usage usage, ObjectNode last) throws IOException {
        if (usage != null) {
            last.putArray("choices");
            last.set("usage", usage(usage));
            exchange.event(last.toString());
        }
        exchange.event("[DONE]");
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
     * {@code POST /v1/responses}: a response whose status follows the finish ({@code completed},
     * {@code incomplete} for max_output_tokens, {@code failed}); streamed as OpenAI's typed events,
     * a {@code response.output_text.delta} a part, ending with the terminal event.
     */
    static void responses(Reply reply, Call call, Exchange exchange) throws Exception {
        String model = call.model();
        String id = "resp_" + exchange.id();
        long created = exchange.created();
        JsonNode body = call.body();
        String text = reply.fullText();
        String status = switch (reply.finish) {
            case STOP -> "completed";
            case LENGTH -> "incomplete";
            case FAILED -> "failed";
        };
        ObjectNode done = response(id, created, model, body, status);
        if (reply.finish == Reply.Finish.LENGTH) {
            done.putObject("incomplete_details").put("reason", "max_output_tokens");
        }
        if (reply.finish == Reply.Finish.FAILED) {
            done.putObject("error").put("code", "server_error").put("message", "The fake model failed the response.");
        }
        done.withArray("output").add(message(id, text, "completed"));
        Usage usage = reply.usage;
        if (usage != null) {
            ObjectNode counts = done.putObject("usage");
            counts.put("input_tokens", usage.input());
            counts.putObject("input_tokens_details").put("cached_tokens", usage.cachedInput());
            counts.put("output_tokens", usage.output());
            counts.putObject("output_tokens_details").put("reasoning_tokens", usage.thoughts());
            counts.put("total_tokens", usage.total());
        }
        if (!call.stream()) {
            exchange.json(200, done);
            return;
        }
        exchange.startStream(SSE);
        int[] sequence = {0};
        String item = "msg_" + id;
        reply.stream(exchange, new Reply.Frames() {
            @Override
            public void begin() throws IOException {
                ObjectNode started = response(id, created, model, body, "in_progress");
                typed(exchange, sequence, "response.created", e -> e.set("response", started));
                typed(exchange, sequence, "response.in_progress", e -> e.set("response", started));
                ObjectNode empty = message(id, "", "in_progress");
                empty.putArray("content");
                typed(
                        exchange,
                        sequence,
                        "response.output_item.added",
                        e -> e.put("output_index", 0).set("item", empty));
                typed(
                        exchange,
                        sequence,
                        "response.content_part.added",
                        e -> located(e, item).set("part", outputText("")));
            }

            @Override
            public void part(int index, String delta) throws IOException {
                typed(
                        exchange,
                        sequence,
                        "response.output_text.delta",
                        e -> located(e, item).put("delta", delta).putArray("logprobs"));
            }

            @Override
            public void end() throws IOException {
                typed(
                        exchange,
                        sequence,
                        "response.output_text.done",
                        e -> located(e, item).put("text", text).putArray("logprobs"));
                typed(
                        exchange,
                        sequence,
                        "response.content_part.done",
                        e -> located(e, item).set("part", outputText(text)));
                typed(
                        exchange,
                        sequence,
                        "response.output_item.done",
                        e -> e.put("output_index", 0).set("item", message(id, text, "completed")));
                typed(exchange, sequence, "response." + status, e -> e.set("response", done));
            }

            @Override
            public void error() throws IOException {
                typed(
                        exchange,
                        sequence,
                        "error",
                        e -> e.put("code", "server_error")
                                .put("message", "The fake model's stream failed.")
                                .putNull("param"));
            }
        });
    }

    private static ObjectNode response(String id, long created, String model, JsonNode body, String status) {
        ObjectNode answer = Json.object()
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
        ObjectNode message = Json.object()
                .put("id", "msg_" + id)
                .put("type", "message")
                .put("status", status)
                .put("role", "assistant");
        message.putArray("content").add(outputText(text));
        return message;
    }

    private static ObjectNode outputText(String text) {
        ObjectNode part = Json.object().put("type", "output_text").put("text", text);
        part.putArray("annotations");
        return part;
    }

    private static ObjectNode located(ObjectNode event, String item) {
        return event.put("item_id", item).put("output_index", 0).put("content_index", 0);
    }

    /** One typed event: {@code event:} its type, {@code data:} an object with the same {@code type}. */
    private static void typed(Exchange exchange, int[] sequence, String type, Consumer<ObjectNode> fill)
            throws IOException {
        ObjectNode event = Json.object().put("type", type);
        fill.accept(event);
        event.put("sequence_number", sequence[0]++);
        exchange.event(type, event.toString());
    }

    /** {@code POST /v1/embeddings}: a vector of the input's hash for each input, and the usage's input. */
    static void embeddings(Reply reply, Call call, Exchange exchange) throws IOException {
        JsonNode input = call.body().path("input");
        ObjectNode answer = Json.object().put("object", "list").put("model", call.model());
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
        Usage usage = reply.usage;
        if (usage != null) {
            answer.putObject("usage").put("prompt_tokens", usage.input()).put("total_tokens", usage.input());
        }
        exchange.json(200, answer);
    }

    private static ObjectNode head(String id, String object, long created, String model) {
        return Json.object()
                .put("id", id)
                .put("object", object)
                .put("created", created)
                .put("model", model);
    }

    /**
     * A chat chunk, of {@code text} if any (the first with the role); with {@code usage: null} when
     * usage comes at the end, as OpenAI sends it.
     */
    private static ObjectNode chunk(
            String id, long created, String model, boolean nullUsage, @Nullable String text, boolean role) {
        ObjectNode chunk = head(id, "chat.completion.chunk", created, model);
        if (nullUsage) {
            chunk.putNull("usage");
        }
        if (text != null) {
            ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
            ObjectNode delta = choice.putObject("delta");
            if (role) {
                delta.put("role", "assistant");
            }
            delta.put("content", text);
            choice.putNull("finish_reason");
        }
        return chunk;
    }

    static ObjectNode usage(Usage usage) {
        ObjectNode node = Json.object()
                .put("prompt_tokens", usage.input())
                .put("completion_tokens", usage.output())
                .put("total_tokens", usage.total());
        if (usage.cachedInput() > 0) {
            node.putObject("prompt_tokens_details").put("cached_tokens", usage.cachedInput());
        }
        return node;
    }

    private static ArrayNode toolCalls(String tool, boolean streamed) {
        ObjectNode call = Json.object();
        if (streamed) {
            call.put("index", 0);
        }
        call.put("id", "call_1").put("type", "function");
        call.putObject("function").put("name", tool).put("arguments", "{}");
        ArrayNode calls = Json.MAPPER.createArrayNode();
        calls.add(call);
        return calls;
    }

    /** The first tool offered, when the history has no tool result yet: the model asks for it. */
    private static @Nullable String toolToCall(JsonNode body) {
        JsonNode tools = body.path("tools");
        if (!tools.isArray() || tools.isEmpty()) {
            return null;
        }
        for (JsonNode message : body.path("messages")) {
            if (message.path("role").asText().equals("tool")) {
                return null;
            }
        }
        return tools.get(0).path("function").path("name").asText();
    }
}
