package dev.ratelimit.genai;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * OpenTelemetry's GenAI client metrics, through Micrometer: {@code gen_ai.client.token.usage} (a
 * distribution of tokens per call, by {@code gen_ai.token.type} {@code input} and {@code output})
 * and {@code gen_ai.client.operation.duration} (seconds from admission to settlement, with {@code
 * error.type} when the call did not complete), both tagged with {@code gen_ai.operation.name},
 * {@code gen_ai.provider.name} and {@code gen_ai.request.model}, with the conventions' advised
 * bucket boundaries. The one recorder of the gateway and the framework integrations (there through
 * {@link ModelCatalog.Builder#meterRegistry}), so dashboards read the same from every front.
 * Thread-safe; the registry is used, never changed.
 */
public final class GenAiMeters implements CallMeters {

    static final String TOKEN_USAGE = "gen_ai.client.token.usage";
    static final String DURATION = "gen_ai.client.operation.duration";

    /** The boundaries OpenTelemetry advises for token usage: powers of 4 from 1 to 4^13. */
    private static final double[] TOKEN_BUCKETS = {
        1, 4, 16, 64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216, 67_108_864
    };

    /** The boundaries OpenTelemetry advises for the duration, in seconds: 0.01 doubling to 81.92. */
    private static final Duration[] DURATION_BUCKETS = durationBuckets();

    private final MeterRegistry registry;

    private GenAiMeters(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
    }

    /**
     * Returns a recorder into a registry.
     *
     * @param registry the registry
     * @return the recorder
     * @throws NullPointerException if {@code registry} is {@code null}
     */
    public static GenAiMeters of(MeterRegistry registry) {
        return new GenAiMeters(registry);
    }

    private static Duration[] durationBuckets() {
        Duration[] buckets = new Duration[14];
        for (int i = 0; i < buckets.length; i++) {
            buckets[i] = Duration.ofMillis(10L << i);
        }
        return buckets;
    }

    /**
     * Returns what records calls of one provider's operation, for {@link ModelCall#reserveAsync(
     * dev.ratelimit.api.RateLimiter, String, dev.ratelimit.api.Tier, ModelCall.Request,
     * dev.ratelimit.api.Concurrency, CallMeters) ModelCall.reserveAsync}: the gateway names both from
     * the endpoint a call came to.
     *
     * @param provider the calls' {@code gen_ai.provider.name}
     * @param operation the calls' {@code gen_ai.operation.name}
     * @return the recorder
     * @throws NullPointerException if {@code provider} or {@code operation} is {@code null}
     */
    public CallMeters calls(String provider, String operation) {
        Objects.requireNonNull(provider, "provider must not be null");
        Objects.requireNonNull(operation, "operation must not be null");
        return (model, usage, nanos, errorType) -> record(provider, operation, model, usage, nanos, errorType);
    }

    @Override
    public void ended(String model, @Nullable TokenUsage usage, long nanos, @Nullable String errorType) {
        record(provider(model), "chat", model, usage, nanos, errorType);
    }

    /**
     * Records one settled call.
     *
     * @param provider its {@code gen_ai.provider.name}: {@code openai}, {@code anthropic}, {@code
     *     gcp.gemini}...
     * @param operation its {@code gen_ai.operation.name}: {@code chat}, {@code text_completion},
     *     {@code embeddings}, {@code generate_content}...
     * @param model the model the call asked for ({@code gen_ai.request.model})
     * @param usage the tokens it was settled to, or {@code null} when it used none (cancelled)
     * @param nanos how long it ran, in nanoseconds
     * @param errorType why it did not complete ({@code error.type}), or {@code null} when it did
     * @throws NullPointerException if {@code provider}, {@code operation} or {@code model} is {@code
     *     null}
     */
    public void record(
            String provider,
            String operation,
            String model,
            @Nullable TokenUsage usage,
            long nanos,
            @Nullable String errorType) {
        Tags tags = Tags.of(
                "gen_ai.operation.name",
                Objects.requireNonNull(operation, "operation must not be null"),
                "gen_ai.provider.name",
                Objects.requireNonNull(provider, "provider must not be null"),
                "gen_ai.request.model",
                Objects.requireNonNull(model, "model must not be null"));
        if (usage != null) {
            tokens(tags, "input").record(usage.allInput());
            tokens(tags, "output").record(usage.output());
        }
        Timer.builder(DURATION)
                .description("GenAI operation duration")
                .tags(errorType == null ? tags : tags.and("error.type", errorType))
                .serviceLevelObjectives(DURATION_BUCKETS)
                .register(registry)
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    private DistributionSummary tokens(Tags tags, String type) {
        return DistributionSummary.builder(TOKEN_USAGE)
                .description("Measures number of input and output tokens used")
                .tags(tags.and("gen_ai.token.type", type))
                .serviceLevelObjectives(TOKEN_BUCKETS)
                .register(registry);
    }

    /** The {@code error.type} of a call that ended before the model's answer: the caller gave up. */
    static final String CANCELLED = "cancelled";

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
