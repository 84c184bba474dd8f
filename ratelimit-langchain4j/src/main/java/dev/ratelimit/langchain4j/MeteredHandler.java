package dev.ratelimit.langchain4j;

import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialThinkingContext;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.PartialToolCallContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import dev.ratelimit.genai.StreamedTokens;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * Forwards every event of one stream to the caller's handler, counts the output produced so far, and
 * settles the call's reservation exactly once, by the first ending: the response, an error, the
 * caller cancelling through the {@link StreamingHandle} it was given, or the delegate failing to
 * start. The settlement happens before the caller's handler hears of the ending, and before the
 * caller's {@code cancel()} returns, even when another ending (the error a cancelled connection
 * raises) settled first on another thread.
 */
final class MeteredHandler implements StreamingChatResponseHandler {

    private final StreamingChatResponseHandler handler;
    private final Admission admission;
    private final StreamedTokens produced; // guarded by itself: counted as it passes, not kept
    private final AtomicBoolean settled = new AtomicBoolean();
    /** Completed once the first ending has settled. */
    private final CompletableFuture<Void> settlement = new CompletableFuture<>();

    MeteredHandler(StreamingChatResponseHandler handler, Admission admission) {
        this.handler = handler;
        this.admission = admission;
        this.produced = admission.counts().stream();
    }

    @Override
    public void onPartialResponse(String partialResponse) {
        record(partialResponse);
        handler.onPartialResponse(partialResponse);
    }

    @Override
    public void onPartialResponse(PartialResponse partialResponse, PartialResponseContext context) {
        record(partialResponse.text());
        handler.onPartialResponse(partialResponse, new PartialResponseContext(metered(context.streamingHandle())));
    }

    @Override
    public void onPartialThinking(PartialThinking partialThinking) {
        record(partialThinking.text()); // reasoning is billed as output
        handler.onPartialThinking(partialThinking);
    }

    @Override
    public void onPartialThinking(PartialThinking partialThinking, PartialThinkingContext context) {
        record(partialThinking.text());
        handler.onPartialThinking(partialThinking, new PartialThinkingContext(metered(context.streamingHandle())));
    }

    @Override
    public void onPartialToolCall(PartialToolCall partialToolCall) {
        record(partialToolCall.partialArguments());
        handler.onPartialToolCall(partialToolCall);
    }

    @Override
    public void onPartialToolCall(PartialToolCall partialToolCall, PartialToolCallContext context) {
        record(partialToolCall.partialArguments());
        handler.onPartialToolCall(partialToolCall, new PartialToolCallContext(metered(context.streamingHandle())));
    }

    @Override
    public void onCompleteToolCall(CompleteToolCall completeToolCall) {
        handler.onCompleteToolCall(completeToolCall);
    }

    @Override
    public void onUnmappedRawEvent(Object rawEvent) {
        handler.onUnmappedRawEvent(rawEvent);
    }

    @Override
    public void onCompleteResponse(ChatResponse completeResponse) {
        settle(() -> admission.complete(completeResponse));
        handler.onCompleteResponse(completeResponse);
    }

    @Override
    public void onError(Throwable error) {
        settle(() -> {
            // output already streamed was generated (and is billed); a stream that failed before any
            // output did no work we can count
            long output = producedTokens();
            if (output > 0) {
                admission.produced(output, error);
            } else {
                admission.cancel(error);
            }
        });
        handler.onError(error);
    }

    /** The delegate threw instead of starting the stream: nothing was produced. */
    void failedToStart(Throwable failure) {
        settle(() -> admission.cancel(failure));
    }

    private void cancelled() {
        if (!settle(() -> admission.produced(producedTokens()))) {
            settlement.join(); // another ending won: the caller still sees it settled when cancel() returns
        }
    }

    /** Settles by this ending if it is the first; returns whether it was. */
    private boolean settle(Runnable ending) {
        if (!settled.compareAndSet(false, true)) {
            return false;
        }
        try {
            ending.run();
        } finally {
            settlement.complete(null);
        }
        return true;
    }

    private void record(@Nullable String text) {
        if (text != null) {
            synchronized (produced) {
                produced.append(text);
            }
        }
    }

    private long producedTokens() {
        synchronized (produced) {
            return produced.count();
        }
    }

    private StreamingHandle metered(StreamingHandle handle) {
        return new StreamingHandle() {
            @Override
            public void cancel() {
                handle.cancel();
                cancelled();
            }

            @Override
            public boolean isCancelled() {
                return handle.isCancelled();
            }
        };
    }
}
