package dev.ratelimit.genai;

import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a settled model call reports to metrics. Free of Micrometer's types, so that {@link
 * ModelCall} runs without Micrometer on the class path; {@link GenAiMeters} is the implementation.
 */
interface CallMeters {

    /** Records nothing. */
    CallMeters NONE = (model, usage, nanos, errorType) -> {};

    /** The {@code error.type} of a call that ended before the model's answer: the caller gave up. */
    String CANCELLED = "cancelled";

    /**
     * Records one settled call.
     *
     * @param model the model the call asked for
     * @param usage the tokens it was settled to, or {@code null} when it was cancelled
     * @param nanos how long it ran, from admission to settlement
     * @param errorType why it did not complete, or {@code null} when it did
     */
    void ended(String model, @Nullable TokenUsage usage, long nanos, @Nullable String errorType);

    /** The {@code error.type} of a failure: the exception's class name. */
    static String errorType(Throwable failure) {
        return Objects.requireNonNull(failure, "failure must not be null")
                .getClass()
                .getName();
    }

    /**
     * The {@code gen_ai.provider.name} of a model, from its name: OpenTelemetry's well-known value
     * for OpenAI's, Anthropic's and Google's Gemini models, else {@code _OTHER}.
     */
    static String provider(String model) {
        String name = model.toLowerCase(Locale.ROOT);
        int slash = name.lastIndexOf('/');
        String bare = slash >= 0 ? name.substring(slash + 1) : name;
        if (bare.startsWith("claude")) {
            return "anthropic";
        }
        if (bare.startsWith("gemini") || bare.startsWith("gemma")) {
            return "gcp.gemini";
        }
        if (bare.startsWith("gpt-")
                || bare.startsWith("chatgpt-")
                || bare.startsWith("text-embedding-")
                || bare.matches("o[1-9]([-.].*)?")) {
            return "openai";
        }
        return "_OTHER";
    }
}
