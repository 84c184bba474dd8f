package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** A {@link Reply} in the shape of Anthropic's Messages API, plain and streamed. */
final class AnthropicAnswers {

    private AnthropicAnswers() {}

    static void messages(Reply reply, Call call, Exchange exchange) throws Exception {
        String id = "msg_" + exchange.id();
        String model = call.model();
        String stop = reply.finish == Reply.Finish.LENGTH ? "max_tokens" : "end_turn";
        Usage usage = reply.usage;
        if (!call.stream()) {
            exchange.json(200, message(id, model, reply.fullText(), stop, usage));
            return;
        }
        exchange.startStream("text/event-stream");
        reply.stream(exchange, new Reply.Frames() {
            @Override
            public void begin() throws IOException {
                ObjectNode start = Json.object().put("type", "message_start");
                ObjectNode message = start.putObject("message")
                        .put("id", id)
                        .put("type", "message")
                        .put("role", "assistant")
                        .put("model", model);
                message.putArray("content");
                message.putNull("stop_reason").putNull("stop_sequence");
                if (usage != null) {
                    usage(message.putObject("usage"), usage, 1);
                }
                exchange.event("message_start", start.toString());
                ObjectNode block =
                        Json.object().put("type", "content_block_start").put("index", 0);
                block.putObject("content_block").put("type", "text").put("text", "");
                exchange.event("content_block_start", block.toString());
                exchange.event("ping", Json.object().put("type", "ping").toString());
            }

            @Override
            public void part(int index, String text) throws IOException {
                ObjectNode delta =
                        Json.object().put("type", "content_block_delta").put("index", 0);
                delta.putObject("delta").put("type", "text_delta").put("text", text);
                exchange.event("content_block_delta", delta.toString());
            }

            @Override
            public void end() throws IOException {
                exchange.event(
                        "content_block_stop",
                        Json.object()
                                .put("type", "content_block_stop")
                                .put("index", 0)
                                .toString());
                ObjectNode end = Json.object().put("type", "message_delta");
                end.putObject("delta").put("stop_reason", stop).putNull("stop_sequence");
                if (usage != null) {
                    end.putObject("usage").put("output_tokens", usage.output());
                }
                exchange.event("message_delta", end.toString());
                exchange.event(
                        "message_stop",
                        Json.object().put("type", "message_stop").toString());
            }

            @Override
            public void error() throws IOException {
                exchange.event(
                        "error",
                        Failure.status(529)
                                .message("Overloaded")
                                .body(Api.Provider.ANTHROPIC)
                                .toString());
            }
        });
    }

    /** A whole message of {@code text}: a text block, the stop reason, the usage if any. */
    static ObjectNode message(
            String id, String model, String text, String stop, @org.jspecify.annotations.Nullable Usage usage) {
        ObjectNode answer = Json.object()
                .put("id", id)
                .put("type", "message")
                .put("role", "assistant")
                .put("model", model);
        answer.putArray("content").addObject().put("type", "text").put("text", text);
        answer.put("stop_reason", stop).putNull("stop_sequence");
        if (usage != null) {
            usage(answer.putObject("usage"), usage, usage.output());
        }
        return answer;
    }

    private static void usage(ObjectNode node, Usage usage, long output) {
        node.put("input_tokens", usage.freshInput())
                .put("cache_creation_input_tokens", usage.cacheWrite())
                .put("cache_read_input_tokens", usage.cachedInput())
                .put("output_tokens", output);
    }
}
