package dev.ratelimit.fakemodel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.google.genai.Client;
import com.google.genai.ResponseStream;
import com.google.genai.types.GenerateContentResponse;
import com.google.genai.types.GenerateContentResponseUsageMetadata;
import com.google.genai.types.HttpOptions;
import com.google.genai.types.HttpRetryOptions;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.InternalServerException;
import com.openai.errors.RateLimitException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The fake model through the official SDKs (openai-java, anthropic-java, google-genai) and the
 * JDK's HTTP client: each API's answers plain and streamed with the usage scripted, failures in each
 * provider's shape, scripted streams (held, broken, erroring), the echo's markers, batches, and the
 * calls recorded.
 */
class FakeModelTest {

    private final FakeModel fake =
            FakeModel.builder().models(List.of("gpt-4o-mini")).start();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void close() {
        fake.close();
    }

    private OpenAIClient openAi() {
        return OpenAIOkHttpClient.builder()
                .baseUrl(fake.baseUrl())
                .apiKey("sk-test")
                .maxRetries(0)
                .build();
    }

    private AnthropicClient anthropic() {
        return AnthropicOkHttpClient.builder()
                .baseUrl(fake.rootUrl())
                .apiKey("sk-ant-test")
                .maxRetries(0)
                .build();
    }

    private Client geminiClient() {
        return Client.builder()
                .apiKey("goog-test")
                .vertexAI(false)
                .httpOptions(HttpOptions.builder()
                        .baseUrl(fake.rootUrl())
                        .apiVersion("v1beta")
                        .retryOptions(HttpRetryOptions.builder().attempts(1).build())
                        .build())
                .build();
    }

    private static ChatCompletionCreateParams chat(String text) {
        return ChatCompletionCreateParams.builder()
                .model("gpt-4o-mini")
                .addUserMessage(text)
                .build();
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(fake.rootUrl() + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @DisplayName("chat completions: the default reply with its usage, plain and streamed with the usage chunk")
    void chatCompletions() {
        ChatCompletion answer = openAi().chat().completions().create(chat("hi"));
        assertThat(answer.choices().get(0).message().content()).contains(FakeModel.DEFAULT_TEXT);
        assertThat(answer.usage().orElseThrow().promptTokens()).isEqualTo(11);
        assertThat(answer.usage().orElseThrow().totalTokens()).isEqualTo(18);

        StringBuilder text = new StringBuilder();
        List<Long> totals = new ArrayList<>();
        try (var stream = openAi().chat()
                .completions()
                .createStreaming(chat("hi").toBuilder()
                        .streamOptions(ChatCompletionStreamOptions.builder()
                                .includeUsage(true)
                                .build())
                        .build())) {
            stream.stream().forEach((ChatCompletionChunk chunk) -> {
                chunk.choices().forEach(choice -> choice.delta().content().ifPresent(text::append));
                chunk.usage().ifPresent(usage -> totals.add(usage.totalTokens()));
            });
        }
        assertThat(text.toString()).isEqualTo(FakeModel.DEFAULT_TEXT);
        assertThat(totals).containsExactly(18L);
    }

    @Test
    @DisplayName("chat completions: a reply calling tools asks for the first tool offered until a tool result comes")
    void toolCall() throws Exception {
        fake.answerByDefault(Reply.text("done").usage(5, 1).callingTools());
        String offered = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"time?\"}],"
                + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"clock\",\"parameters\":{}}}]}";

        JsonNode call =
                Json.MAPPER.readTree(post("/v1/chat/completions", offered).body());
        String withResult = offered.replace(
                "],\"tools\"", ",{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"noon\"}],\"tools\"");
        JsonNode answered =
                Json.MAPPER.readTree(post("/v1/chat/completions", withResult).body());

        assertThat(call.at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
        assertThat(call.at("/choices/0/message/tool_calls/0/function/name").asText())
                .isEqualTo("clock");
        assertThat(answered.at("/choices/0/message/content").asText()).isEqualTo("done");
    }

    @Test
    @DisplayName("responses: plain and streamed as typed events, response.completed carrying the usage")
    void responses() {
        fake.answerByDefault(Reply.text("one two three").usage(Usage.of(13, 5).withCachedInput(4)));
        ResponseCreateParams params =
                ResponseCreateParams.builder().model("gpt-4o-mini").input("hi").build();

        Response plain = openAi().responses().create(params);
        assertThat(plain.usage().orElseThrow().inputTokens()).isEqualTo(13);
        assertThat(plain.usage().orElseThrow().inputTokensDetails().cachedTokens())
                .isEqualTo(4);

        StringBuilder deltas = new StringBuilder();
        List<Long> outputs = new ArrayList<>();
        try (var stream = openAi().responses().createStreaming(params)) {
            stream.stream().forEach((ResponseStreamEvent event) -> {
                event.outputTextDelta().ifPresent(delta -> deltas.append(delta.delta()));
                event.completed()
                        .ifPresent(done -> outputs.add(
                                done.response().usage().orElseThrow().outputTokens()));
            });
        }
        assertThat(deltas.toString()).isEqualTo("one two three");
        assertThat(outputs).containsExactly(5L);
    }

    @Test
    @DisplayName("responses: a reply cut at the limit is incomplete, for max_output_tokens")
    void responsesIncomplete() {
        fake.answerByDefault(Reply.text("cut").usage(3, 1).finish(Reply.Finish.LENGTH));

        Response answer = openAi().responses()
                .create(ResponseCreateParams.builder()
                        .model("gpt-4o-mini")
                        .input("hi")
                        .build());

        assertThat(answer.status().orElseThrow().asString()).isEqualTo("incomplete");
        assertThat(answer.incompleteDetails()
                        .orElseThrow()
                        .reason()
                        .orElseThrow()
                        .asString())
                .isEqualTo("max_output_tokens");
    }

    @Test
    @DisplayName("embeddings: a vector per input and the usage's input tokens")
    void embeddings() {
        CreateEmbeddingResponse answer = openAi().embeddings()
                .create(EmbeddingCreateParams.builder()
                        .model("text-embedding-3-small")
                        .inputOfArrayOfStrings(List.of("a", "b"))
                        .build());

        assertThat(answer.data()).hasSize(2);
        assertThat(answer.usage().promptTokens()).isEqualTo(11);
    }

    @Test
    @DisplayName("messages: Anthropic's usage with cache reads and writes, plain and streamed")
    void messages() {
        fake.answerByDefault(Reply.text("Hello there")
                .usage(Usage.of(16, 7).withCachedInput(3).withCacheWrite(2)));
        MessageCreateParams params = MessageCreateParams.builder()
                .model("claude-sonnet-4-5")
                .maxTokens(100)
                .addUserMessage("hi")
                .build();

        Message plain = anthropic().messages().create(params);
        assertThat(plain.usage().inputTokens()).isEqualTo(11);
        assertThat(plain.usage().cacheReadInputTokens()).contains(3L);
        assertThat(plain.usage().cacheCreationInputTokens()).contains(2L);

        StringBuilder text = new StringBuilder();
        List<Long> outputs = new ArrayList<>();
        try (StreamResponse<RawMessageStreamEvent> stream =
                anthropic().messages().createStreaming(params)) {
            stream.stream().forEach(event -> {
                event.contentBlockDelta()
                        .flatMap(delta -> delta.delta().text())
                        .ifPresent(delta -> text.append(delta.text()));
                event.messageDelta()
                        .ifPresent(delta -> outputs.add(delta.usage().outputTokens()));
            });
        }
        assertThat(text.toString()).isEqualTo("Hello there");
        assertThat(outputs).containsExactly(7L);
    }

    @Test
    @DisplayName("Gemini: generateContent and the SSE stream, the last chunk with the whole usageMetadata")
    void gemini() throws Exception {
        fake.answerByDefault(Reply.text("Hello from Gemini")
                .usage(Usage.of(11, 7).withCachedInput(5).withThoughts(4)));
        try (Client client = geminiClient()) {
            GenerateContentResponse plain = client.models.generateContent("gemini-2.5-flash", "hi", null);
            assertThat(plain.text()).isEqualTo("Hello from Gemini");
            assertThat(plain.usageMetadata().orElseThrow().totalTokenCount()).contains(22);

            StringBuilder text = new StringBuilder();
            List<GenerateContentResponseUsageMetadata> usages = new ArrayList<>();
            try (ResponseStream<GenerateContentResponse> stream =
                    client.models.generateContentStream("gemini-2.5-flash", "hi", null)) {
                for (GenerateContentResponse chunk : stream) {
                    text.append(chunk.text());
                    chunk.usageMetadata().ifPresent(usages::add);
                }
            }
            assertThat(text.toString()).isEqualTo("Hello from Gemini");
            assertThat(usages.get(0).candidatesTokenCount()).isEmpty();
            assertThat(usages.get(usages.size() - 1).cachedContentTokenCount()).contains(5);
            assertThat(usages.get(usages.size() - 1).thoughtsTokenCount()).contains(4);
        }
        assertThat(fake.calls().get(0).path()).isEqualTo("/v1beta/models/gemini-2.5-flash:generateContent");
        assertThat(fake.calls().get(0).header("x-goog-api-key")).isEqualTo("goog-test");
        assertThat(fake.calls().get(1).queryParameter("alt")).isEqualTo("sse");
    }

    @Test
    @DisplayName("Gemini without alt=sse: the stream is one JSON array")
    void geminiArray() throws Exception {
        HttpResponse<String> answer =
                post("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "{\"contents\":[]}");

        JsonNode chunks = Json.MAPPER.readTree(answer.body());
        assertThat(chunks.isArray()).isTrue();
        assertThat(chunks).hasSize(5);
        assertThat(chunks.get(4).at("/candidates/0/finishReason").asText()).isEqualTo("STOP");
    }

    @Test
    @DisplayName(
            "failures in each provider's shape: OpenAI's 429 with retry-after, Anthropic's 529, Google's RetryInfo")
    void failures() throws Exception {
        fake.enqueue(Failure.status(429).retryAfter(Duration.ofMillis(1_500)));
        assertThatThrownBy(() -> openAi().chat().completions().create(chat("hi")))
                .isInstanceOfSatisfying(
                        RateLimitException.class,
                        e -> assertThat(e.headers().values("retry-after")).containsExactly("2"));

        fake.enqueue(Failure.status(529));
        HttpResponse<String> overloaded =
                post("/v1/messages", "{\"model\":\"claude\",\"max_tokens\":5,\"messages\":[]}");
        assertThat(overloaded.statusCode()).isEqualTo(529);
        assertThat(Json.MAPPER.readTree(overloaded.body()).at("/error/type").asText())
                .isEqualTo("overloaded_error");

        fake.enqueue(Failure.status(429).retryAfter(Duration.ofSeconds(5)));
        HttpResponse<String> exhausted = post("/v1beta/models/gemini:generateContent", "{}");
        JsonNode error = Json.MAPPER.readTree(exhausted.body()).path("error");
        assertThat(error.path("status").asText()).isEqualTo("RESOURCE_EXHAUSTED");
        assertThat(error.at("/details/0/retryDelay").asText()).isEqualTo("5s");

        fake.answerByDefault(Failure.status(500));
        assertThatThrownBy(() -> openAi().chat().completions().create(chat("hi")))
                .isInstanceOf(InternalServerException.class);
    }

    @Test
    @DisplayName("a held stream sends its first part, waits for the test's latch, then goes on to the end")
    void held() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        fake.enqueue(Reply.text("a b c")
                .usage(1, 3)
                .at(1, release, Reply.Then.CONTINUE)
                .onEnd(ended::countDown));
        CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() ->
                lines("/v1/chat/completions", "{\"model\":\"m\",\"stream\":true,\"messages\":[]}", Integer.MAX_VALUE));

        assertThat(ended.await(200, TimeUnit.MILLISECONDS)).isFalse();
        release.countDown();

        assertThat(lines.get(10, TimeUnit.SECONDS))
                .filteredOn(line -> line.contains("\"content\":\""))
                .hasSize(3);
        assertThat(lines.get()).contains("data: [DONE]");
        assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    @DisplayName("a broken stream ends without its finish: the client sees the connection end early")
    void broken() {
        AtomicInteger sent = new AtomicInteger();
        fake.enqueue(Reply.text("a b c d").usage(1, 4).at(2, Reply.Then.BREAK).onPart(sent::incrementAndGet));

        List<String> lines =
                lines("/v1/chat/completions", "{\"model\":\"m\",\"stream\":true,\"messages\":[]}", Integer.MAX_VALUE);

        assertThat(lines).noneMatch(line -> line.contains("[DONE]") || line.contains("finish_reason\":\"stop"));
        assertThat(sent).hasValue(2);
    }

    @Test
    @DisplayName("an endless stream sends parts until the client goes away, then its side ends")
    void endless() throws Exception {
        CountDownLatch ended = new CountDownLatch(1);
        AtomicInteger parts = new AtomicInteger();
        fake.enqueue(Reply.text("a")
                .usage(1, 1)
                .at(0, Reply.Then.ENDLESS)
                .onPart(parts::incrementAndGet)
                .onEnd(ended::countDown));

        List<String> lines = lines("/v1/chat/completions", "{\"model\":\"m\",\"stream\":true,\"messages\":[]}", 100);

        assertThat(lines).hasSize(100);
        assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
        // the 100 lines read hold events and the blank lines between them: at least one part per two
        assertThat(parts.get()).isGreaterThanOrEqualTo(50);
    }

    @Test
    @DisplayName("an error ending on Anthropic's stream: the error event, no message_stop")
    void errorEvent() throws Exception {
        fake.enqueue(Reply.text("a b c").usage(5, 3).at(1, Reply.Then.ERROR));

        HttpResponse<String> answer =
                post("/v1/messages", "{\"model\":\"claude\",\"max_tokens\":5,\"stream\":true,\"messages\":[]}");

        assertThat(answer.body()).contains("event: error", "overloaded_error").doesNotContain("message_stop");
    }

    @Test
    @DisplayName("the echo: the reply to the last user text cut at the limit, its counts, and the markers")
    void echo() throws Exception {
        fake.answerByDefault(new Echo(new Echo.Tokens() {
            @Override
            public long input(Call call) {
                return 42;
            }

            @Override
            public long output(Call call, String text) {
                return text.isEmpty() ? 0 : text.split(" ").length;
            }
        }));

        JsonNode whole = Json.MAPPER.readTree(post(
                        "/v1/chat/completions",
                        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi  there\"}]}")
                .body());
        assertThat(whole.at("/choices/0/message/content").asText()).isEqualTo(Echo.reply("hi there"));
        assertThat(whole.at("/usage/prompt_tokens").asLong()).isEqualTo(42);

        JsonNode cut = Json.MAPPER.readTree(post(
                        "/v1/messages",
                        "{\"model\":\"claude\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}")
                .body());
        assertThat(cut.at("/content/0/text").asText()).isEqualTo("Mock reply from");
        assertThat(cut.path("stop_reason").asText()).isEqualTo("max_tokens");
        assertThat(cut.at("/usage/output_tokens").asLong()).isEqualTo(3);

        HttpResponse<String> refused = post(
                "/v1/chat/completions",
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"[mock:status=503]\"}]}");
        assertThat(refused.statusCode()).isEqualTo(503);
        assertThat(refused.headers().firstValue("retry-after")).contains("2");
        assertThat(refused.body()).contains("mock_503");

        HttpResponse<String> limited = post(
                "/v1/messages",
                "{\"model\":\"claude\",\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"[mock:429]\"}]}");
        assertThat(limited.statusCode()).isEqualTo(429);
        assertThat(limited.headers().firstValue("retry-after")).contains("5");
        assertThat(limited.body()).contains("rate_limit_error");

        List<String> broken = lines(
                "/v1/responses",
                "{\"model\":\"m\",\"stream\":true,\"input\":\"[mock:break] one two three four\"}",
                Integer.MAX_VALUE);
        assertThat(broken).contains("event: response.output_text.delta");
        assertThat(broken).doesNotContain("event: response.completed");
    }

    @Test
    @DisplayName("OpenAI batches: an upload, a batch that waits, completed by the test with an output file")
    void openAiBatches() throws Exception {
        String boundary = "xyz";
        String upload = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.jsonl\"\r\n\r\n"
                + "{\"custom_id\":\"one\"}\n{\"custom_id\":\"two\"}\r\n--" + boundary + "--\r\n";
        HttpResponse<String> file = http.send(
                HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/files"))
                        .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                        .POST(HttpRequest.BodyPublishers.ofString(upload))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        String fileId = Json.MAPPER.readTree(file.body()).path("id").asText();
        String batchId = Json.MAPPER
                .readTree(post(
                                "/v1/batches",
                                "{\"input_file_id\":\"" + fileId + "\",\"endpoint\":\"/v1/chat/completions\"}")
                        .body())
                .path("id")
                .asText();

        fake.openAiBatches().complete(batchId, 10, 2);

        JsonNode batch = Json.MAPPER.readTree(http.send(
                        HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/batches/" + batchId))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body());
        assertThat(batch.path("status").asText()).isEqualTo("completed");
        String output = http.send(
                        HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/files/"
                                        + batch.path("output_file_id").asText() + "/content"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(output.lines()).hasSize(2).allMatch(line -> line.contains("\"total_tokens\":12"));
    }

    @Test
    @DisplayName("Anthropic batches: in progress until the test ends them, then results with the usage")
    void anthropicBatches() throws Exception {
        String id = Json.MAPPER
                .readTree(post(
                                "/v1/messages/batches",
                                "{\"requests\":[{\"custom_id\":\"a\",\"params\":{\"model\":\"claude\"}}]}")
                        .body())
                .path("id")
                .asText();

        fake.anthropicBatches().succeed(id, Usage.of(10, 2));

        String results = http.send(
                        HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/messages/batches/" + id + "/results"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(Json.MAPPER
                        .readTree(results)
                        .at("/result/message/usage/input_tokens")
                        .asLong())
                .isEqualTo(10);
    }

    @Test
    @DisplayName("every call is recorded with its headers and body; model lists answer from the builder's models")
    void recorded() throws Exception {
        AtomicInteger parts = new AtomicInteger();
        fake.enqueue(Reply.text("x y").usage(1, 2).onPart(parts::incrementAndGet));
        openAi().chat().completions().createStreaming(chat("hello")).stream().count();

        Call call = fake.calls().get(0);
        assertThat(call.api()).isEqualTo(Api.CHAT_COMPLETIONS);
        assertThat(call.header("authorization")).isEqualTo("Bearer sk-test");
        assertThat(call.lastUserText()).isEqualTo("hello");
        assertThat(parts).hasValue(2);
        assertThat(openAi().models().retrieve("gpt-4o-mini").id()).isEqualTo("gpt-4o-mini");
    }

    /**
     * The non-empty lines of an answer (status line and headers included) read over a plain socket
     * until it ends or breaks off, at most {@code max}: what arrived before a break is all there.
     */
    private List<String> lines(String path, String body, int max) {
        List<String> lines = new ArrayList<>();
        URI root = URI.create(fake.rootUrl());
        try (Socket socket = new Socket(root.getHost(), root.getPort())) {
            byte[] json = body.getBytes(StandardCharsets.UTF_8);
            socket.getOutputStream()
                    .write(("POST " + path + " HTTP/1.1\r\nHost: " + root.getAuthority()
                                    + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "
                                    + json.length + "\r\n\r\n")
                            .getBytes(StandardCharsets.UTF_8));
            socket.getOutputStream().write(json);
            BufferedReader reader =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while (lines.size() < max && (line = reader.readLine()) != null) {
                if (!line.isEmpty()) {
                    lines.add(line);
                }
            }
        } catch (IOException e) {
            // broken off: the lines so far
        }
        return lines;
    }
}
