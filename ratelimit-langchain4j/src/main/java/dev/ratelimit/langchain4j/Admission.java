package dev.ratelimit.langchain4j;

import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.ratelimit.genai.ModelCall;
import dev.ratelimit.genai.TokenCounts;

/**
 * One admitted model call: the shared {@link ModelCall} and how to settle it from LangChain4j's
 * {@link ChatResponse}. Settling waits for the store, so a caller that sees the outcome of a call
 * also sees its settlement in the user's windows.
 */
final class Admission {

    private final ModelCall call;

    Admission(ModelCall call) {
        this.call = call;
    }

    TokenCounts counts() {
        return call.counts();
    }

    /**
     * Commits the provider's reported usage, by kind of token ({@link ReportedUsage}); without it,
     * the counted prompt and output.
     */
    void complete(ChatResponse response) {
        TokenUsage usage = response.tokenUsage();
        long counted = TokenCounter.output(
                call.counts(), response.aiMessage().text(), response.aiMessage().toolExecutionRequests());
        if (usage == null) {
            call.complete(null, null, null, counted).toCompletableFuture().join();
            return;
        }
        call.complete(ReportedUsage.of(usage, call.promptTokens(), counted))
                .toCompletableFuture()
                .join();
    }

    /** Commits the counted prompt and output, for a stream that ended without a response. */
    void produced(long outputTokens) {
        call.produced(outputTokens).toCompletableFuture().join();
    }

    /** Commits the counted prompt and output, for a stream that failed after producing output. */
    void produced(long outputTokens, Throwable failure) {
        call.produced(outputTokens, failure).toCompletableFuture().join();
    }

    /** Gives the reservation back: the caller gave up before the model did any work. */
    void cancel() {
        call.cancel().toCompletableFuture().join();
    }

    /** Gives the reservation back: the model failed before doing any work we know of. */
    void cancel(Throwable failure) {
        call.cancel(failure).toCompletableFuture().join();
    }
}
