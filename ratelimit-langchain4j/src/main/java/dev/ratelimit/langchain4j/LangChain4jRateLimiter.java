package dev.ratelimit.langchain4j;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.genai.ModelCatalog;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.UnpricedModelException;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Wraps LangChain4j chat models so that every call to the model is admitted by a {@link RateLimiter}
 * first and settled to the provider's reported usage after.
 *
 * <p>Per call, the wrapped model resolves the end user (the {@value #USER_ATTRIBUTE} attribute of the
 * call's {@link ChatRequestOptions}, else the configured {@linkplain Builder#user(Supplier) user
 * resolver}), the user's {@link Tier}, and the model's {@link SharedBudget} (by the request's model
 * name, else the model's default), estimates the call's tokens (the prompt counted by {@code TokenCounts} plus
 * the request's {@code maxOutputTokens}, else the model's default, else {@link
 * Builder#defaultMaxOutputTokens(long)}) and makes one {@link RateLimiter#reserve(String, Tier,
 * dev.ratelimit.api.Amounts, List) reservation}. A refusal throws {@link RateLimitExceededException} and the model is not
 * called. Otherwise the reservation is settled, before the caller sees the outcome:
 *
 * <ul>
 *   <li>a response: committed to the usage the provider reported ({@code ChatResponse.tokenUsage()}),
 *       or to the counted prompt and output when it reported none;
 *   <li>an exception from the model, or a stream that fails before producing anything: cancelled,
 *       the request, tokens and money given back;
 *   <li>a stream that fails after producing output, or that the caller cancels through its {@code
 *       StreamingHandle}: committed to the counted prompt plus the output produced so far.
 * </ul>
 *
 * <p>Windows in money ({@code usd_micros}, such as a tier's {@code spend-day: $5/1d}) are charged
 * from a {@linkplain Builder#priceTable(PriceTable) price table}: the reservation also holds the
 * call's worst case ({@link ModelPrice#worstCaseMicros}: every prompt token at the model's dearest
 * input price, the most it may produce at its output price), and the settlement charges the cost of
 * the usage reported (fresh input, cached input, cache writes and output, each at its price), or of
 * the counted prompt and output without a report. A call to a model the table does not price, when a
 * spend window applies to it, throws {@link UnpricedModelException} before the model is called, and
 * nothing is charged; without a table every model is unpriced.
 *
 * <p>Every call to the model is charged: an AI Service's tool-calling loop calls the model once per
 * round, and each round is one reservation.
 *
 * <pre>{@code
 * LangChain4jRateLimiter rateLimit = LangChain4jRateLimiter.builder(limiter)
 *         .user(() -> currentUser())
 *         .tier(user -> tiers.resolve(tierOf(user)))
 *         .build();
 * Assistant assistant = AiServices.builder(Assistant.class)
 *         .chatModel(rateLimit.wrap(openAiChatModel))
 *         .build();
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe; so are the models they wrap, if the delegates are.
 */
public final class LangChain4jRateLimiter {

    /**
     * The {@link ChatRequestOptions} listener attribute that names the end user of one call; it takes
     * precedence over the configured user resolver.
     */
    public static final String USER_ATTRIBUTE = "dev.ratelimit.user";

    /** The completion tokens reserved when neither the request nor the model names a maximum. */
    public static final long DEFAULT_MAX_OUTPUT_TOKENS = 1_024;

    private final RateLimiter limiter;
    private final Function<ChatRequest, @Nullable String> user;
    private final Function<String, Tier> tier;
    private final ModelCatalog models;
    private final long defaultMaxOutputTokens;

    private LangChain4jRateLimiter(Builder builder, Function<String, Tier> tier, ModelCatalog models) {
        this.limiter = builder.limiter;
        this.user = builder.user;
        this.tier = tier;
        this.models = models;
        this.defaultMaxOutputTokens = builder.defaultMaxOutputTokens;
    }

    /**
     * Starts configuring the wrapping of models for {@code limiter}.
     *
     * @param limiter the limiter every call reserves with
     * @return a builder
     * @throws NullPointerException if {@code limiter} is {@code null}
     */
    public static Builder builder(RateLimiter limiter) {
        return new Builder(Objects.requireNonNull(limiter, "limiter"));
    }

    /**
     * Returns a chat model that calls {@code model} only within budget; pass it wherever LangChain4j
     * takes a {@link ChatModel}, such as {@code AiServices.builder(...).chatModel(...)}.
     *
     * @param model the model to call
     * @return the rate-limited model; its default parameters, provider, listeners and capabilities
     *     are {@code model}'s
     * @throws NullPointerException if {@code model} is {@code null}
     */
    public ChatModel wrap(ChatModel model) {
        return new RateLimitedChatModel(Objects.requireNonNull(model, "model"), this);
    }

    /**
     * Returns a streaming chat model that calls {@code model} only within budget; pass it wherever
     * LangChain4j takes a {@link StreamingChatModel}, such as {@code
     * AiServices.builder(...).streamingChatModel(...)}. A refused call throws {@link
     * RateLimitExceededException} from {@code chat(...)} itself, before the handler hears anything;
     * every later outcome reaches the handler. So does {@link UnpricedModelException}.
     *
     * @param model the model to call
     * @return the rate-limited model; its default parameters, provider, listeners and capabilities
     *     are {@code model}'s
     * @throws NullPointerException if {@code model} is {@code null}
     */
    public StreamingChatModel wrapStreaming(StreamingChatModel model) {
        return new RateLimitedStreamingChatModel(Objects.requireNonNull(model, "model"), this);
    }

    /**
     * Resolves the call's user, tier and model budget, and reserves its estimate.
     *
     * @throws RateLimitExceededException if the reservation is refused
     * @throws UnpricedModelException if a spend window applies and the model has no price
     * @throws IllegalStateException if no end user can be resolved
     */
    Admission admit(ChatRequest request, @Nullable ChatRequestOptions options, ChatRequestParameters defaults) {
        String userId = userOf(request, options);
        Tier userTier = Objects.requireNonNull(tier.apply(userId), "the tier resolver returned null for " + userId);
        String modelName = request.modelName() != null ? request.modelName() : defaults.modelName();
        TokenCounts counts = TokenCounter.countsFor(modelName);
        long prompt = TokenCounter.prompt(counts, request.messages(), request.toolSpecifications());
        Integer maxOutput = request.maxOutputTokens() != null ? request.maxOutputTokens() : defaults.maxOutputTokens();
        return new Admission(models.admit(
                limiter,
                userId,
                userTier,
                models.request(
                        modelName,
                        "(no model name)",
                        counts,
                        prompt,
                        maxOutput != null ? maxOutput : defaultMaxOutputTokens)));
    }

    private String userOf(ChatRequest request, @Nullable ChatRequestOptions options) {
        Object attribute = options == null ? null : options.listenerAttributes().get(USER_ATTRIBUTE);
        String userId = attribute instanceof String named ? named : user.apply(request);
        if (userId == null || userId.isBlank()) {
            throw new IllegalStateException("no end user for this model call: set the " + USER_ATTRIBUTE
                    + " attribute of the call's ChatRequestOptions or configure a user resolver that answers");
        }
        return userId;
    }

    @Override
    public String toString() {
        return "LangChain4jRateLimiter[" + limiter + ", " + models + ", default max output tokens "
                + defaultMaxOutputTokens + "]";
    }

    /**
     * Configures a {@link LangChain4jRateLimiter}; not thread-safe. Each model's cap and price are
     * looked up by the request's model name, else the model's default.
     */
    public static final class Builder extends ModelCatalog.Builder<Builder> {

        private final RateLimiter limiter;
        private Function<ChatRequest, @Nullable String> user = request -> null;
        private @Nullable Function<String, Tier> tier;
        private long defaultMaxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS;

        private Builder(RateLimiter limiter) {
            this.limiter = limiter;
        }

        /**
         * Resolves the end user of each call from the calling context, such as the authenticated
         * principal of the current thread; replaces any earlier user resolver.
         *
         * @param user answers the user id, or {@code null} when there is none (the call then fails
         *     with {@link IllegalStateException} and the model is not called)
         * @return this builder
         * @throws NullPointerException if {@code user} is {@code null}
         */
        public Builder user(Supplier<@Nullable String> user) {
            Objects.requireNonNull(user, "user");
            this.user = request -> user.get();
            return this;
        }

        /**
         * Resolves the end user of each call from the request itself; replaces any earlier user
         * resolver.
         *
         * @param user answers the user id of a request, or {@code null} when there is none
         * @return this builder
         * @throws NullPointerException if {@code user} is {@code null}
         */
        public Builder userFromRequest(Function<ChatRequest, @Nullable String> user) {
            this.user = Objects.requireNonNull(user, "user");
            return this;
        }

        /**
         * Resolves the tier of each user, for example {@code user -> tierPolicy.resolve(tierNameOf(user))};
         * required.
         *
         * @param tier answers the tier of a user id, never {@code null}
         * @return this builder
         * @throws NullPointerException if {@code tier} is {@code null}
         */
        public Builder tier(Function<String, Tier> tier) {
            this.tier = Objects.requireNonNull(tier, "tier");
            return this;
        }

        /**
         * Sets the completion tokens reserved for a call whose request and model name no {@code
         * maxOutputTokens}; {@value LangChain4jRateLimiter#DEFAULT_MAX_OUTPUT_TOKENS} unless set.
         *
         * @param tokens the tokens, at least 0
         * @return this builder
         * @throws IllegalArgumentException if {@code tokens} is negative
         */
        public Builder defaultMaxOutputTokens(long tokens) {
            if (tokens < 0) {
                throw new IllegalArgumentException("defaultMaxOutputTokens must not be negative, was " + tokens);
            }
            this.defaultMaxOutputTokens = tokens;
            return this;
        }

        /**
         * Builds the configuration.
         *
         * @return the rate limiter for LangChain4j models
         * @throws IllegalStateException if no {@linkplain #tier(Function) tier resolver} was set
         */
        public LangChain4jRateLimiter build() {
            Function<String, Tier> resolver = tier;
            if (resolver == null) {
                throw new IllegalStateException("tier is required: set a tier resolver with tier(...)");
            }
            return new LangChain4jRateLimiter(this, resolver, catalog());
        }
    }
}
