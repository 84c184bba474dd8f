package dev.ratelimit.langchain4j;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import java.util.List;
import java.util.Set;

/**
 * A {@link StreamingChatModel} that reserves before each call of its delegate and settles when the
 * stream ends: on its response, on its error, or when the caller cancels it. Every convenience
 * method ends in {@link #chat(ChatRequest, ChatRequestOptions, StreamingChatResponseHandler)}, which
 * calls the delegate's with a {@link MeteredHandler} around the caller's handler.
 */
final class RateLimitedStreamingChatModel implements StreamingChatModel {

    private final StreamingChatModel delegate;
    private final LangChain4jRateLimiter rateLimit;

    RateLimitedStreamingChatModel(StreamingChatModel delegate, LangChain4jRateLimiter rateLimit) {
        this.delegate = delegate;
        this.rateLimit = rateLimit;
    }

    @Override
    public void chat(ChatRequest request, ChatRequestOptions options, StreamingChatResponseHandler handler) {
        Admission admission = rateLimit.admit(request, options, delegate.defaultRequestParameters());
        MeteredHandler metered = new MeteredHandler(handler, admission);
        try {
            delegate.chat(request, options, metered);
        } catch (RuntimeException | Error e) {
            metered.failedToStart();
            throw e;
        }
    }

    /** Reached only by callers that bypass {@link #chat(ChatRequest, ChatRequestOptions, StreamingChatResponseHandler)}. */
    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        Admission admission = rateLimit.admit(request, null, delegate.defaultRequestParameters());
        MeteredHandler metered = new MeteredHandler(handler, admission);
        try {
            delegate.doChat(request, metered);
        } catch (RuntimeException | Error e) {
            metered.failedToStart();
            throw e;
        }
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
        return "RateLimitedStreamingChatModel[" + delegate + "]";
    }
}
