package dev.ratelimit.springai;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.genai.ModelCall;
import dev.ratelimit.genai.ModelCatalog;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.UnpricedModelException;
import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.ToolCallingAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisor;
import org.springframework.ai.chat.client.advisor.api.StreamAdvisorChain;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.core.Ordered;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@code ChatClient} advisor that admits every call to the model through a {@link RateLimiter}
 * first and settles it to the provider's reported usage after, for {@code call()} and {@code
 * stream()} alike.
 *
 * <p>Per call to the model, the advisor finds the end user (the {@value #USER} advisor parameter,
 * else the {@link EndUserResolver}), the user's {@link Tier} (the {@value #TIER} parameter, else the
 * resolver's, by name in the {@link TierPolicy}), and the model's {@link SharedBudget} (by the
 * call's model name); it estimates the call's tokens (the prompt counted by {@code TokenCounts}, plus the
 * call's {@code maxTokens} option, else {@link Builder#defaultMaxTokens(long)}) and makes one
 * reservation for the user's windows and the model's cap at once. A refusal throws {@link
 * RateLimitExceededException} (from {@code call()}, or as the stream's error) and the model is not
 * called. Otherwise the reservation is settled once, by the call's ending:
 *
 * <ul>
 *   <li>a response, or a stream that completes: committed to the usage the provider reports ({@code
 *       ChatResponse.getMetadata().getUsage()}, the last a stream reports), else to the counted
 *       prompt and output;
 *   <li>an exception from the model, or a stream that fails before producing output: cancelled,
 *       the request, tokens and money given back; a stream that fails after producing output commits the
 *       counted prompt and the output produced;
 *   <li>a stream the caller cancels (disposes): committed to the counted prompt and the output
 *       produced so far.
 * </ul>
 *
 * <p>Windows in money ({@code usd_micros}, such as a tier's {@code spend-day: $5/1d}) are charged
 * from a {@linkplain Builder#priceTable(PriceTable) price table}: the reservation also holds the
 * call's worst case ({@link ModelPrice#worstCaseMicros}: every prompt token at the model's dearest
 * input price, the most it may produce at its output price), and the settlement charges the cost of
 * the usage the provider reports (fresh input, cached input, cache writes and output, each at its
 * price), or of the counted prompt and output without a report. A call to a model the table does not
 * price, when a spend window applies to it, throws {@link UnpricedModelException} before the model
 * is called, and nothing is charged; without a table every model is unpriced.
 *
 * <p>Every call to the model is charged. Spring AI 2.0 runs tool calls in its {@link
 * ToolCallingAdvisor} (order {@link ToolCallingAdvisor#DEFAULT_ORDER}), which calls the rest of the
 * chain once per round; this advisor's order, {@link #DEFAULT_ORDER}, places it after that one, so
 * each round is one reservation.
 *
 * <pre>{@code
 * RateLimitAdvisor rateLimit = RateLimitAdvisor.builder(limiter, tierPolicy)
 *         .modelBudgets(Map.of("gpt-4o", SharedBudget.of("openai/gpt-4o", Window.tokens("tpm", 300_000, Duration.ofMinutes(1)))))
 *         .build();
 * ChatClient chat = ChatClient.builder(chatModel).defaultAdvisors(rateLimit).build();
 * String answer = chat.prompt("hi").advisors(a -> a.param(RateLimitAdvisor.USER, userId)).call().content();
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class RateLimitAdvisor implements CallAdvisor, StreamAdvisor {

    /** The advisor parameter that names the end user of one call; it takes precedence over the resolver. */
    public static final String USER = "dev.ratelimit.user";

    /** The advisor parameter that names the tier of one call; it takes precedence over the resolver's. */
    public static final String TIER = "dev.ratelimit.tier";

    /** The completion tokens reserved when the call's options name no {@code maxTokens}. */
    public static final long DEFAULT_MAX_TOKENS = 1_024;

    /**
     * The default order: after Spring AI's {@link ToolCallingAdvisor} (so every round of a tool loop
     * is admitted) and before the model call itself ({@link Ordered#LOWEST_PRECEDENCE}).
     */
    public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 1_000;

    /** The name an unpriced call without a model option is refused under. */
    private static final String UNNAMED_MODEL = "(no model option)";

    private final RateLimiter limiter;
    private final TierPolicy tiers;
    private final EndUserResolver users;
    private final ModelCatalog models;
    private final long defaultMaxTokens;
    private final int order;

    private RateLimitAdvisor(Builder builder, ModelCatalog models) {
        this.limiter = builder.limiter;
        this.tiers = builder.tiers;
        this.users = builder.users;
        this.models = models;
        this.defaultMaxTokens = builder.defaultMaxTokens;
        this.order = builder.order;
        TokenCounts.forModel(null); // loads the default vocabulary now, not on the first (reactive) call
    }

    /**
     * Starts configuring an advisor.
     *
     * @param limiter the limiter every model call reserves with
     * @param tiers the tiers that users' tier names select
     * @return a builder
     * @throws NullPointerException if an argument is {@code null}
     */
    public static Builder builder(RateLimiter limiter, TierPolicy tiers) {
        return new Builder(Objects.requireNonNull(limiter, "limiter"), Objects.requireNonNull(tiers, "tiers"));
    }

    @Override
    public String getName() {
        return "RateLimitAdvisor";
    }

    @Override
    public int getOrder() {
        return order;
    }

    /**
     * Admits one call to the model, calls it, and settles before returning.
     *
     * @throws RateLimitExceededException if the user's windows or the model's cap refuse the call
     * @throws UnpricedModelException if a spend window applies and the model has no price
     * @throws IllegalStateException if no end user can be found
     */
    @Override
    public ChatClientResponse adviseCall(ChatClientRequest request, CallAdvisorChain chain) {
        ModelCall.Request estimate = estimate(request);
        EndUser user = endUser(request, users.resolve(request));
        ModelCall call = models.admit(limiter, user.id(), tiers.resolve(user.tier()), estimate);
        ChatClientResponse response;
        try {
            response = chain.nextCall(request);
        } catch (RuntimeException | Error e) {
            call.cancel(e).toCompletableFuture().join(); // the provider refused or failed: no work we know of
            throw e;
        }
        settle(call, response.chatResponse(), PromptTokens.output(estimate.counts(), response.chatResponse()))
                .toCompletableFuture()
                .join();
        return response;
    }

    /**
     * Admits one streamed call to the model when the stream is subscribed to, without blocking, and
     * settles before the stream completes; a refusal ({@link RateLimitExceededException}, {@link
     * UnpricedModelException}) is the stream's error.
     */
    @Override
    public Flux<ChatClientResponse> adviseStream(ChatClientRequest request, StreamAdvisorChain chain) {
        return Mono.defer(() -> users.resolveStreaming(request))
                .map(resolved -> endUser(request, resolved))
                .switchIfEmpty(Mono.fromSupplier(() -> endUser(request, null)))
                .flatMap(user -> {
                    ModelCall.Request estimate = estimate(request);
                    return Mono.fromCompletionStage(
                                    () -> models.admitAsync(limiter, user.id(), tiers.resolve(user.tier()), estimate))
                            .onErrorMap(CompletionException.class, e -> e.getCause() == null ? e : e.getCause())
                            .map(call -> new MeteredStream(call, estimate.counts()));
                })
                .flatMapMany(metered -> metered.meter(chain.nextStream(request)));
    }

    private ModelCall.Request estimate(ChatClientRequest request) {
        ChatOptions options = request.prompt().getOptions();
        String model = options == null ? null : options.getModel();
        TokenCounts counts = TokenCounts.forModel(model);
        Integer maxTokens = options == null ? null : options.getMaxTokens();
        return models.request(
                model,
                UNNAMED_MODEL,
                counts,
                PromptTokens.prompt(counts, request.prompt()),
                maxTokens != null ? maxTokens : defaultMaxTokens);
    }

    private static EndUser endUser(ChatClientRequest request, @Nullable EndUser resolved) {
        Object named = request.context().get(USER);
        Object tier = request.context().get(TIER);
        String id = named != null && !named.toString().isBlank()
                ? named.toString()
                : resolved == null ? null : resolved.id();
        if (id == null) {
            throw new IllegalStateException("no end user for this model call: set the advisor parameter "
                    + USER + " (.advisors(a -> a.param(RateLimitAdvisor.USER, userId))) or configure an"
                    + " EndUserResolver that answers");
        }
        return new EndUser(id, tier != null ? tier.toString() : resolved == null ? null : resolved.tier());
    }

    /**
     * Commits the reported usage, by kind of token ({@link ReportedUsage}), when the provider reported
     * any, else the counted prompt and output.
     */
    static CompletionStage<Void> settle(ModelCall call, @Nullable ChatResponse response, long countedOutput) {
        Usage usage = response == null ? null : response.getMetadata().getUsage();
        return usage != null && reported(usage)
                ? call.complete(ReportedUsage.of(usage, call.promptTokens(), countedOutput))
                : call.complete(null, null, null, countedOutput);
    }

    /** Spring AI answers "no usage" with zeros ({@code EmptyUsage}): a real call always has a prompt. */
    static boolean reported(@Nullable Usage usage) {
        return usage != null && usage.getTotalTokens() != null && usage.getTotalTokens() > 0;
    }

    @Override
    public String toString() {
        return "RateLimitAdvisor[" + limiter + ", " + models + ", default max tokens " + defaultMaxTokens + ", order "
                + order + "]";
    }

    /**
     * Configures a {@link RateLimitAdvisor}; not thread-safe. Each model's cap and price are looked
     * up by the call's model option.
     */
    public static final class Builder extends ModelCatalog.Builder<Builder> {

        private final RateLimiter limiter;
        private final TierPolicy tiers;
        private EndUserResolver users = request -> null;
        private long defaultMaxTokens = DEFAULT_MAX_TOKENS;
        private int order = DEFAULT_ORDER;

        private Builder(RateLimiter limiter, TierPolicy tiers) {
            this.limiter = limiter;
            this.tiers = tiers;
        }

        /**
         * Finds the end user of calls that name none in the {@link #USER} parameter; without one,
         * such calls fail with {@link IllegalStateException} before the model is called.
         *
         * @param users the resolver
         * @return this builder
         * @throws NullPointerException if {@code users} is {@code null}
         */
        public Builder endUserResolver(EndUserResolver users) {
            this.users = Objects.requireNonNull(users, "users");
            return this;
        }

        /**
         * Sets the completion tokens reserved for a call whose options name no {@code maxTokens};
         * {@value RateLimitAdvisor#DEFAULT_MAX_TOKENS} unless set.
         *
         * @param tokens the tokens, at least 0
         * @return this builder
         * @throws IllegalArgumentException if {@code tokens} is negative
         */
        public Builder defaultMaxTokens(long tokens) {
            if (tokens < 0) {
                throw new IllegalArgumentException("defaultMaxTokens must not be negative, was " + tokens);
            }
            this.defaultMaxTokens = tokens;
            return this;
        }

        /**
         * Sets the advisor's order; keep it above {@link ToolCallingAdvisor#DEFAULT_ORDER} (the tool
         * loop's order) so that every round of a tool loop is admitted. {@link #DEFAULT_ORDER} unless
         * set.
         *
         * @param order the order
         * @return this builder
         */
        public Builder order(int order) {
            this.order = order;
            return this;
        }

        /**
         * Builds the advisor.
         *
         * @return the advisor
         */
        public RateLimitAdvisor build() {
            return new RateLimitAdvisor(this, catalog());
        }
    }
}
