package dev.ratelimit.genai;

import org.jspecify.annotations.Nullable;

/**
 * What a settled model call reports to metrics. Free of Micrometer's types, so that {@link
 * ModelCall} runs without Micrometer on the class path; {@link GenAiMeters} is the implementation
 * ({@link GenAiMeters#calls} for one provider's operation).
 */
public interface CallMeters {

    /** Records nothing. */
    CallMeters NONE = (model, usage, nanos, errorType) -> {};

    /**
     * Records one settled call.
     *
     * @param model the model the call asked for
     * @param usage the tokens it was settled to, or {@code null} when it was cancelled
     * @param nanos how long it ran, from admission to settlement
     * @param errorType why it did not complete, or {@code null} when it did
     */
    void ended(String model, @Nullable TokenUsage usage, long nanos, @Nullable String errorType);
}
