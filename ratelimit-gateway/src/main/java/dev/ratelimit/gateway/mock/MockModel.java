package dev.ratelimit.gateway.mock;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ratelimit.fakemodel.Call;
import dev.ratelimit.fakemodel.Echo;
import dev.ratelimit.fakemodel.FakeModel;
import dev.ratelimit.gateway.protocol.anthropic.AnthropicTokens;
import dev.ratelimit.gateway.protocol.gemini.GeminiTokens;
import dev.ratelimit.gateway.protocol.openai.TokenCounter;
import java.net.URI;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The built-in mock model the gateway answers with when no upstream is configured: the project's one
 * fake model ({@link FakeModel}, the one its tests run against) answering every endpoint with {@link
 * Echo}, which repeats the last user text and takes the markers that ask for a misbehaving upstream
 * ({@code [mock:slow]}, {@code [mock:break]}, {@code [mock:error]}, {@code [mock:429]}...). Its token
 * counts stand in for each provider's tokenizer: the gateway's own count for OpenAI's models, two
 * tokens per seven characters for Anthropic's, a token per four for Gemini's ({@link #anthropicInput},
 * {@link #GEMINI_PARTS}), so a client sees usage close to, and not always equal to, the gateway's
 * estimate, as with a real provider.
 */
public final class MockModel implements AutoCloseable {

    /** The model the mock lists besides the configured ones. */
    static final String MODEL = "ratelimit-mock";

    /** Anthropic's content blocks counted as the gateway counts them, with the mock's text count. */
    private static final AnthropicTokens.Contents ANTHROPIC_CONTENTS =
            new AnthropicTokens.Contents(MockModel::anthropicText, 1_000, 3);

    /** Gemini's contents counted as the gateway walks them, with the mock's text count, 258 a media part and 1 a content. */
    public static final GeminiTokens.Parts GEMINI_PARTS = new GeminiTokens.Parts(MockModel::geminiText, 258, 1);

    private final FakeModel fake;

    private MockModel(FakeModel fake) {
        this.fake = fake;
    }

    /**
     * Starts the mock on a free port of 127.0.0.1.
     *
     * @param tokens the gateway's counter, the mock's count of OpenAI's models
     * @param models the models it lists besides {@value #MODEL}
     * @param clock the time its answers carry
     */
    public static MockModel start(TokenCounter tokens, Collection<String> models, Clock clock) {
        List<String> listed = new ArrayList<>(List.of(MODEL));
        listed.addAll(models);
        return new MockModel(FakeModel.builder()
                .name("mock-model")
                .clock(clock)
                .models(listed)
                .answer(new Echo(new Counts(tokens)))
                .start());
    }

    /** The base URL, {@code http://127.0.0.1:<port>/v1}. */
    public URI baseUrl() {
        return URI.create(fake.baseUrl());
    }

    @Override
    public void close() {
        fake.close();
    }

    /** The mock's input tokens of an Anthropic request: the stand-in for Claude's count. */
    public static long anthropicInput(JsonNode body) {
        long tokens = 3;
        JsonNode system = body.get("system");
        if (system != null) {
            tokens += 3 + ANTHROPIC_CONTENTS.of(system);
        }
        for (JsonNode message : body.path("messages")) {
            tokens += 3 + ANTHROPIC_CONTENTS.of(message.get("content"));
        }
        JsonNode tools = body.get("tools");
        if (tools != null && tools.isArray() && !tools.isEmpty()) {
            tokens += 300 + anthropicText(tools.toString());
        }
        return tokens;
    }

    /** Two tokens per seven characters (code points), rounded up: the mock's Claude count. */
    public static long anthropicText(String text) {
        return (text.codePointCount(0, text.length()) * 2L + 6) / 7;
    }

    /** A token per four code points, rounded up: the mock's Gemini count. */
    static long geminiText(String text) {
        return (text.codePointCount(0, text.length()) + 3L) / 4;
    }

    /** Each provider's stand-in count. */
    private record Counts(TokenCounter tokens) implements Echo.Tokens {

        @Override
        public long input(Call call) {
            JsonNode body = call.body();
            String model = call.model();
            return switch (call.api()) {
                case CHAT_COMPLETIONS -> tokens.chatPrompt(model, body.path("messages"));
                case COMPLETIONS -> tokens.completionPrompt(model, body.path("prompt"));
                case RESPONSES -> tokens.responsesInput(model, body.get("instructions"), body.get("input"));
                case EMBEDDINGS -> tokens.embeddingInput(model, body.path("input"));
                case MESSAGES, COUNT_TOKENS -> anthropicInput(body);
                case GENERATE_CONTENT, STREAM_GENERATE_CONTENT, GEMINI_COUNT_TOKENS -> GEMINI_PARTS.prompt(body);
                case OTHER -> 0;
            };
        }

        @Override
        public long output(Call call, String text) {
            return switch (call.provider()) {
                case OPENAI -> tokens.count(call.model(), text);
                case ANTHROPIC -> anthropicText(text);
                case GEMINI -> geminiText(text);
            };
        }
    }
}
