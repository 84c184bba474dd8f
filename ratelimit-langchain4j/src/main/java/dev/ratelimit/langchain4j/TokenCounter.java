package dev.ratelimit.langchain4j;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Counts LangChain4j messages with OpenAI's tokenizers (jtokkit): the model's own encoding when
 * jtokkit knows the model name, else {@code o200k_base}, the encoding of OpenAI's current models and
 * a fair guess for others. An estimate only: the provider's reported usage settles the real count.
 * Thread-safe.
 */
final class TokenCounter {

    /** Tokens OpenAI adds per chat message (role and separators) and to prime the reply. */
    private static final int PER_MESSAGE = 3;

    private static final int REPLY_PRIMING = 3;

    /** Loading a vocabulary takes a second or so: the process loads each once, on first use. */
    private static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();

    private TokenCounter() {}

    static Encoding encodingFor(@Nullable String modelName) {
        if (modelName != null) {
            int slash = modelName.lastIndexOf('/'); // "openai/gpt-4o" as routers name it
            String name = slash >= 0 ? modelName.substring(slash + 1) : modelName;
            var known = REGISTRY.getEncodingForModel(name);
            if (known.isPresent()) {
                return known.get();
            }
        }
        return REGISTRY.getEncoding(EncodingType.O200K_BASE);
    }

    /**
     * Estimates a request's prompt: each message's text, tool calls and tool results, the tools
     * offered, and OpenAI's per-message and reply overheads. Images and audio count nothing here; the
     * provider's usage settles them.
     */
    static long prompt(Encoding encoding, List<ChatMessage> messages, List<ToolSpecification> tools) {
        long tokens = REPLY_PRIMING;
        for (ChatMessage message : messages) {
            tokens += PER_MESSAGE + message(encoding, message);
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

    /** Counts text as ordinary text: a prompt that spells a special token is counted, never refused. */
    static long text(Encoding encoding, @Nullable String text) {
        return text == null || text.isEmpty() ? 0 : encoding.countTokensOrdinary(text);
    }
}
