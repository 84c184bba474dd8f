package dev.ratelimit.langchain4j;

import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A {@link StreamingChatModel} that reserves before each call of its delegate and settles when the
 * stream ends: on its response, on its error, or when the caller cancels it. Every convenience
 * method ends in {@link #chat(ChatRequest, ChatRequestOptions, StreamingChatResponseHandler)}, which
 * calls the delegate's with a {@link MeteredHandler} around the caller's handler.
 */
final class RateLimitedStreamingChatModel extends ForwardingModel<StreamingChatModel> implements StreamingChatModel {

    RateLimitedStreamingChatModel(StreamingChatModel delegate, LangChain4jRateLimiter rateLimit) {
        super(delegate, rateLimit, passed(delegate));
    }

    @Override
    public void chat(ChatRequest request, ChatRequestOptions options, StreamingChatResponseHandler handler) {
        start(request, options, handler, metered -> delegate.chat(request, options, metered));
    }

    /** Reached only by callers that bypass {@link #chat(ChatRequest, ChatRequestOptions, StreamingChatResponseHandler)}. */
    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        start(request, null, handler, metered -> delegate.doChat(request, metered));
    }

    /** Admits the request, then starts the delegate's stream with a {@link MeteredHandler} around the caller's. */
    private void start(
            ChatRequest request,
            @Nullable ChatRequestOptions options,
            StreamingChatResponseHandler handler,
            Consumer<MeteredHandler> stream) {
        Admission admission = rateLimit.admit(request, options, delegate.defaultRequestParameters());
        MeteredHandler metered = new MeteredHandler(handler, admission);
        try {
            stream.accept(metered);
        } catch (RuntimeException | Error e) {
            metered.failedToStart(e);
            throw e;
        }
    }
}
