package dev.ratelimit.langchain4j;

import com.knuddels.jtokkit.api.Encoding;
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
 * Counts LangChain4j messages with {@link TokenCounts} (jtokkit). An estimate only: the provider's
 * reported usage settles the real count. Thread-safe.
 */
final class TokenCounter {

    private TokenCounter() {}

    static Encoding encodingFor(@Nullable String modelName) {
        return TokenCounts.encodingFor(modelName);
    }

    /**
     * Estimates a request's prompt: each message's text, tool calls and tool results, the tools
     * offered, and OpenAI's per-message and reply overheads. Images and audio count nothing here; the
     * provider's usage settles them.
     */
    static long prompt(Encoding encoding, List<ChatMessage> messages, List<ToolSpecification> tools) {
        long tokens = TokenCounts.REPLY_PRIMING;
        for (ChatMessage message : messages) {
            tokens += TokenCounts.PER_MESSAGE + message(encoding, message);
        }
        for (ToolSpecification tool : tools) {
            tokens += text(encoding, tool.toJson());
        }
        return tokens;
    }

    private static long message(Encoding encoding, ChatMessage message) {
        if (message instanceof SystemMessage system) {
            return text(encoding, system.text());
        }
        if (message instanceof UserMessage user) {
            long tokens = text(encoding, user.name());
            for (Content content : user.contents()) {
                if (content instanceof TextContent textContent) {
                    tokens += text(encoding, textContent.text());
                }
            }
            return tokens;
        }
        if (message instanceof AiMessage ai) {
            return output(encoding, ai.text(), ai.toolExecutionRequests());
        }
        if (message instanceof ToolExecutionResultMessage result) {
            return text(encoding, result.toolName()) + text(encoding, result.text());
        }
        return 0; // custom messages: the provider decides what they cost
    }

    /** Counts what a model produced: its text and the tool calls it asked for. */
    static long output(Encoding encoding, @Nullable String text, @Nullable List<ToolExecutionRequest> toolCalls) {
        long tokens = text(encoding, text);
        if (toolCalls != null) {
            for (ToolExecutionRequest call : toolCalls) {
                tokens += text(encoding, call.name()) + text(encoding, call.arguments());
            }
        }
        return tokens;
    }

    static long text(Encoding encoding, @Nullable String text) {
        return TokenCounts.text(encoding, text);
    }
}
