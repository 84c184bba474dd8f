package dev.ratelimit.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * A {@link ChatModel} that reserves before each call of its delegate and settles after. Every
 * convenience method of {@link ChatModel} ends in {@link #chat(ChatRequest, ChatRequestOptions)},
 * which calls the delegate's, so the delegate's default parameters and listeners apply as they would
 * unwrapped.
 */
final class RateLimitedChatModel implements ChatModel {

    private final ChatModel delegate;
    private final LangChain4jRateLimiter rateLimit;

    RateLimitedChatModel(ChatModel delegate, LangChain4jRateLimiter rateLimit) {
        this.delegate = delegate;
        this.rateLimit = rateLimit;
    }

    @Override
    public ChatResponse chat(ChatRequest request, ChatRequestOptions options) {
        Admission admission = rateLimit.admit(request, options, delegate.defaultRequestParameters());
        return call(admission, () -> delegate.chat(request, options));
    }

    /** Reached only by callers that bypass {@link #chat(ChatRequest, ChatRequestOptions)}. */
    @Override
    public ChatResponse doChat(ChatRequest request) {
        Admission admission = rateLimit.admit(request, null, delegate.defaultRequestParameters());
        return call(admission, () -> delegate.doChat(request));
    }

    private static ChatResponse call(Admission admission, Supplier<ChatResponse> model) {
        ChatResponse response;
        try {
            response = model.get();
        } catch (RuntimeException | Error e) {
            admission.cancel(); // the provider refused or failed: it did no work we know of
            throw e;
        }
        admission.complete(response);
        return response;
    }

    @Override
    public ChatRequestParameters defaultRequestParameters() {
        return delegate.defaultRequestParameters();
    }

    @Override
    public List<ChatModelListener> listeners() {
        return delegate.listeners();
    }

    @Override
    public ModelProvider provider() {
        return delegate.provider();
    }

    @Override
    public Set<Capability> supportedCapabilities() {
        return delegate.supportedCapabilities();
    }

    @Override
    public String toString() {
        return "RateLimitedChatModel[" + delegate + "]";
    }
}
