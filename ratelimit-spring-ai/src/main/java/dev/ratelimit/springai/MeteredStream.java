package dev.ratelimit.springai;

import dev.ratelimit.genai.ModelCall;
import dev.ratelimit.genai.StreamedTokens;
import dev.ratelimit.genai.TokenCounts;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Meters one admitted stream: keeps the output produced so far and the last usage the provider
 * reported, and settles the call once, by the first ending. Completion and errors wait for the
 * settlement before they reach the subscriber; a cancellation settles without waiting (nobody is
 * listening any more).
 */
final class MeteredStream {

    private final ModelCall call;
    private final StreamedTokens produced; // guarded by itself: counted as it passes, not kept
    private volatile @Nullable ChatResponse lastReported;

    MeteredStream(ModelCall call, TokenCounts counts) {
        this.call = call;
        this.produced = counts.stream();
    }

    Flux<ChatClientResponse> meter(Flux<ChatClientResponse> stream) {
        return stream.doOnNext(this::record)
                .concatWith(
                        Mono.defer(() -> Mono.fromCompletionStage(completed())).then(Mono.empty()))
                .onErrorResume(error -> Mono.defer(() -> Mono.fromCompletionStage(failed(error)))
                        .then(Mono.error(error)))
                .doOnCancel(this::cancelled);
    }

    private void record(ChatClientResponse chunk) {
        ChatResponse response = chunk.chatResponse();
        if (response == null) {
            return;
        }
        if (RateLimitAdvisor.reported(response.getMetadata().getUsage())) {
            lastReported = response;
        }
        synchronized (produced) {
            for (Generation generation : response.getResults()) {
                AssistantMessage output = generation.getOutput();
                if (output.getText() != null) {
                    produced.append(output.getText());
                }
                for (AssistantMessage.ToolCall toolCall : output.getToolCalls()) {
                    produced.append(toolCall.name());
                    produced.append(toolCall.arguments());
                }
            }
        }
    }

    private long producedTokens() {
        synchronized (produced) {
            return produced.count();
        }
    }

    private java.util.concurrent.CompletionStage<Void> completed() {
        return RateLimitAdvisor.settle(call, lastReported, producedTokens());
    }

    /** Output already streamed was generated (and is billed); a stream that failed before any did no work. */
    private java.util.concurrent.CompletionStage<Void> failed(Throwable error) {
        long output = producedTokens();
        return output > 0 ? call.produced(output, error) : call.cancel(error);
    }

    private void cancelled() {
        call.produced(producedTokens());
    }
}
