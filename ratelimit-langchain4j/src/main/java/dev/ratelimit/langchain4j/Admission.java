package dev.ratelimit.langchain4j;

import com.knuddels.jtokkit.api.Encoding;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.ratelimit.api.Reservation;

/**
 * One admitted model call: its reservation and what is needed to settle it. Settling waits for the
 * store, so a caller that sees the outcome of a call also sees its settlement in the user's windows.
 */
final class Admission {

    private final Reservation reservation;
    private final Encoding encoding;
    private final long promptTokens;

    Admission(Reservation reservation, Encoding encoding, long promptTokens) {
        this.reservation = reservation;
        this.encoding = encoding;
        this.promptTokens = promptTokens;
    }

    Encoding encoding() {
        return encoding;
    }

    /** Commits the provider's reported total; without one, the counted prompt and output. */
    void complete(ChatResponse response) {
        TokenUsage usage = response.tokenUsage();
        long counted = TokenCounter.output(
                encoding, response.aiMessage().text(), response.aiMessage().toolExecutionRequests());
        commit(usage == null ? promptTokens + counted : reported(usage, counted));
    }

    private long reported(TokenUsage usage, long countedOutput) {
        if (usage.totalTokenCount() != null) {
            return usage.totalTokenCount();
        }
        long input = usage.inputTokenCount() != null ? usage.inputTokenCount() : promptTokens;
        long output = usage.outputTokenCount() != null ? usage.outputTokenCount() : countedOutput;
        return input + output;
    }

    /** Commits the counted prompt and the output produced, for a stream that ended without a response. */
    void produced(long outputTokens) {
        commit(promptTokens + outputTokens);
    }

    void cancel() {
        reservation.cancel().toCompletableFuture().join();
    }

    private void commit(long tokens) {
        // the stage always completes normally: a store failure is counted and logged by the limiter
        reservation.commit(tokens).toCompletableFuture().join();
    }
}
