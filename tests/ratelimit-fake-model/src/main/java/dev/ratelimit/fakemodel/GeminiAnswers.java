package dev.ratelimit.fakemodel;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Reply} in the shape of Gemini's {@code GenerateContentResponse}: whole, or streamed a
 * part a chunk (server-sent events with {@code alt=sse}, else a JSON array), the last chunk with the
 * finish reason and the whole usage.
 */
final class GeminiAnswers {

    private GeminiAnswers() {}

    static void generate(Reply reply, Call call, Exchange exchange) throws Exception {
        String id = exchange.id();
        String model = call.model();
        String finish = reply.finish == Reply.Finish.LENGTH ? "MAX_TOKENS" : "STOP";
        Usage usage = reply.usage;
        if (!call.stream()) {
            exchange.json(200, chunk(id, model, reply.fullText(), finish, whole(usage)));
            return;
        }
        boolean sse = "sse".equals(call.queryParameter("alt"));
        exchange.startStream(sse ? "text/event-stream" : "application/json");
        int count = reply.parts.size();
        StringBuilder sent = new StringBuilder();
        reply.stream(exchange, new Reply.Frames() {
            private boolean first = true;

            @Override
            public void begin() throws IOException {
                if (!sse) {
                    exchange.send("[");
                }
            }

            @Override
            public void part(int index, String text) throws IOException {
                sent.append(text);
                boolean last = index == count - 1;
                long soFar = reply.outputCount == null ? -1 : reply.outputCount.applyAsLong(sent.toString());
                write(chunk(id, model, text, last ? finish : null, last ? whole(usage) : partial(usage, soFar)));
            }

            @Override
            public void end() throws IOException {
                if (count == 0) {
                    write(chunk(id, model, "", finish, whole(usage)));
                }
                if (!sse) {
                    exchange.send("]");
                }
            }

            @Override
            public void error() throws IOException {
                write(Failure.status(500).body(Api.Provider.GEMINI));
            }

            private void write(ObjectNode chunk) throws IOException {
                exchange.send(sse ? "data: " + chunk + "\r\n\r\n" : (first ? "" : ",\r\n") + chunk);
                first = false;
            }
        });
    }

    /** The whole {@code usageMetadata}: prompt, candidates, cached and thinking tokens, and their total. */
    private static @Nullable ObjectNode whole(@Nullable Usage usage) {
        if (usage == null) {
            return null;
        }
        ObjectNode node =
                Json.object().put("promptTokenCount", usage.input()).put("candidatesTokenCount", usage.output());
        if (usage.cachedInput() > 0) {
            node.put("cachedContentTokenCount", usage.cachedInput());
        }
        if (usage.thoughts() > 0) {
            node.put("thoughtsTokenCount", usage.thoughts());
        }
        return node.put("totalTokenCount", usage.total());
    }

    /** An earlier chunk's {@code usageMetadata}: the prompt, and the output so far unless {@code soFar} is negative. */
    private static @Nullable ObjectNode partial(@Nullable Usage usage, long soFar) {
        if (usage == null) {
            return null;
        }
        ObjectNode node = Json.object().put("promptTokenCount", usage.input());
        return soFar < 0
                ? node.put("totalTokenCount", usage.input())
                : node.put("candidatesTokenCount", soFar).put("totalTokenCount", usage.input() + soFar);
    }

    private static ObjectNode chunk(
            String id, String model, String text, @Nullable String finish, @Nullable ObjectNode usage) {
        ObjectNode chunk = Json.object();
        ObjectNode candidate = chunk.putArray("candidates").addObject();
        ObjectNode content = candidate.putObject("content");
        content.putArray("parts").addObject().put("text", text);
        content.put("role", "model");
        if (finish != null) {
            candidate.put("finishReason", finish);
        }
        candidate.put("index", 0);
        if (usage != null) {
            chunk.set("usageMetadata", usage);
        }
        chunk.put("modelVersion", model).put("responseId", id);
        return chunk;
    }
}
