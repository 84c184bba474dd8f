package dev.ratelimit.springai;

import dev.ratelimit.genai.TokenCounts;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * Counts Spring AI prompts and responses with {@link TokenCounts}: an estimate only; the
 * provider's reported usage settles the real count.
 */
final class PromptTokens {

    private PromptTokens() {}

    /**
     * Estimates a prompt: each message's text, tool calls and tool results, the tools offered, and
     * OpenAI's per-message and reply overheads. Media count nothing here; the provider's usage
     * settles them.
     */
    static long prompt(TokenCounts counts, Prompt prompt) {
        long tokens = TokenCounts.REPLY_PRIMING;
        for (Message message : prompt.getInstructions()) {
            tokens += TokenCounts.PER_MESSAGE + message(counts, message);
        }
        ChatOptions options = prompt.getOptions();
        List<ToolCallback> callbacks =
                options instanceof ToolCallingChatOptions tools ? tools.getToolCallbacks() : null;
        if (callbacks != null) {
            for (ToolCallback tool : callbacks) {
                ToolDefinition definition = tool.getToolDefinition();
                tokens += counts.count(definition.name())
                        + counts.count(definition.description())
                        + counts.count(definition.inputSchema());
            }
        }
        return tokens;
    }

    private static long message(TokenCounts counts, Message message) {
        if (message instanceof AssistantMessage assistant) {
            return output(counts, assistant);
        }
        long tokens = counts.count(message.getText());
        if (message instanceof ToolResponseMessage results) {
            for (ToolResponseMessage.ToolResponse result : results.getResponses()) {
                tokens += counts.count(result.name()) + counts.count(result.responseData());
            }
        }
        return tokens;
    }

    /** Counts what a model produced: its text and the tool calls it asked for. */
    static long output(TokenCounts counts, AssistantMessage message) {
        long tokens = counts.count(message.getText());
        for (AssistantMessage.ToolCall call : message.getToolCalls()) {
            tokens += counts.count(call.name()) + counts.count(call.arguments());
        }
        return tokens;
    }

    /** Counts every generation of a response, or of one chunk of a stream. */
    static long output(TokenCounts counts, @Nullable ChatResponse response) {
        if (response == null) {
            return 0;
        }
        long tokens = 0;
        List<Generation> generations = response.getResults();
        for (Generation generation : generations) {
            tokens += output(counts, generation.getOutput());
        }
        return tokens;
    }
}
