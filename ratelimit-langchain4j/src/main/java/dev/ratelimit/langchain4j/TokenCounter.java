package dev.ratelimit.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.ratelimit.genai.TokenCounts;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Counts LangChain4j messages with {@link TokenCounts}. An estimate only: the provider's
 * reported usage settles the real count. Thread-safe.
 */
final class TokenCounter {

    private TokenCounter() {}

    static TokenCounts countsFor(@Nullable String modelName) {
        return TokenCounts.forModel(modelName);
    }

    /**
     * Estimates a request's prompt: each message's text, tool calls and tool results, the tools
     * offered, and OpenAI's per-message and reply overheads. Images and audio count nothing here; the
     * provider's usage settles them.
     */
    static long prompt(TokenCounts counts, List<ChatMessage> messages, List<ToolSpecification> tools) {
        long tokens = TokenCounts.REPLY_PRIMING;
        for (ChatMessage message : messages) {
            tokens += TokenCounts.PER_MESSAGE + message(counts, message);
        }
        for (ToolSpecification tool : tools) {
            tokens += text(counts, tool.toJson());
        }
        return tokens;
    }

    private static long message(TokenCounts counts, ChatMessage message) {
        if (message instanceof SystemMessage system) {
            return text(counts, system.text());
        }
        if (message instanceof UserMessage user) {
            long tokens = text(counts, user.name());
            for (Content content : user.contents()) {
                if (content instanceof TextContent textContent) {
                    tokens += text(counts, textContent.text());
                }
            }
            return tokens;
        }
        if (message instanceof AiMessage ai) {
            return output(counts, ai.text(), ai.toolExecutionRequests());
        }
        if (message instanceof ToolExecutionResultMessage result) {
            return text(counts, result.toolName()) + text(counts, result.text());
        }
        return 0; // custom messages: the provider decides what they cost
    }

    /** Counts what a model produced: its text and the tool calls it asked for. */
    static long output(TokenCounts counts, @Nullable String text, @Nullable List<ToolExecutionRequest> toolCalls) {
        long tokens = text(counts, text);
        if (toolCalls != null) {
            for (ToolExecutionRequest call : toolCalls) {
                tokens += text(counts, call.name()) + text(counts, call.arguments());
            }
        }
        return tokens;
    }

    static long text(TokenCounts counts, @Nullable String text) {
        return counts.count(text);
    }
}
