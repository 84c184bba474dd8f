package dev.ratelimit.langchain4j;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.function.Supplier;

/**
 * A {@link ChatModel} that reserves before each call of its delegate and settles after. Every
 * convenience method of {@link ChatModel} ends in {@link #chat(ChatRequest, ChatRequestOptions)},
 * which calls the delegate's, so the delegate's default parameters and listeners apply as they would
 * unwrapped.
 */
final class RateLimitedChatModel extends ForwardingModel<ChatModel> implements ChatModel {

    RateLimitedChatModel(ChatModel delegate, LangChain4jRateLimiter rateLimit) {
        super(delegate, rateLimit, passed(delegate));
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
            admission.cancel(e); // the provider refused or failed: it did no work we know of
            throw e;
        }
        admission.complete(response);
        return response;
    }
}
