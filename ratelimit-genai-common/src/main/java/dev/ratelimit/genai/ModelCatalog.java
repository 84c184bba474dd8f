package dev.ratelimit.genai;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * What a framework integration knows of the models it admits calls to, by model name: each model's
 * upstream cap (a {@link SharedBudget} charged together with the user's windows, all or nothing) and
 * its price (for spend windows). The integrations' builders configure it through {@link Builder}, so
 * that the Spring AI advisor and the LangChain4j wrapper take the same settings with the same meaning.
 *
 * <p>Immutable and thread-safe.
 */
public final class ModelCatalog {

    private final Map<String, SharedBudget> budgets;
    private final @Nullable PriceTable prices;
    private final CallMeters meters;

    private ModelCatalog(Map<String, SharedBudget> budgets, @Nullable PriceTable prices, CallMeters meters) {
        this.budgets = budgets;
        this.prices = prices;
        this.meters = meters;
    }

    /**
     * Describes one call to a model as counted before it is made: the model's cap and price are
     * looked up by its name.
     *
     * @param model the model's name, or {@code null} when the call names none (then it has neither a
     *     cap nor a price)
     * @param unnamed the name an unnamed call is refused under when a spend window applies
     * @param counts the counts the prompt was counted with
     * @param promptTokens the counted prompt, at least 0
     * @param maxOutputTokens the most the call may produce, at least 0
     * @return the call, for {@link ModelCall#admit}
     * @throws IllegalArgumentException if a count is negative
     */
    public ModelCall.Request request(
            @Nullable String model, String unnamed, TokenCounts counts, long promptTokens, long maxOutputTokens) {
        PriceTable table = prices;
        return new ModelCall.Request(
                model == null ? unnamed : model,
                model == null ? null : budgets.get(model),
                model == null || table == null ? null : table.priceOf(model),
                counts,
                promptTokens,
                maxOutputTokens);
    }

    /**
     * Admits a call as {@link ModelCall#admit} does, recording its metrics when it is settled if the
     * builder was given a registry.
     *
     * @param limiter the limiter
     * @param userId the user
     * @param tier the user's tier
     * @param request the call
     * @return the admitted call
     * @throws RateLimitExceededException if the limiter refused the call
     */
    public ModelCall admit(RateLimiter limiter, String userId, Tier tier, ModelCall.Request request) {
        return ModelCall.admit(limiter, userId, tier, request, meters);
    }

    /**
     * Admits a call as {@link ModelCall#admitAsync} does, recording its metrics when it is settled if
     * the builder was given a registry.
     *
     * @param limiter the limiter
     * @param userId the user
     * @param tier the user's tier
     * @param request the call
     * @return the stage of the admitted call; it fails with {@link RateLimitExceededException} if the
     *     limiter refused the call
     */
    public CompletionStage<ModelCall> admitAsync(
            RateLimiter limiter, String userId, Tier tier, ModelCall.Request request) {
        return ModelCall.admitAsync(limiter, userId, tier, request, meters);
    }

    @Override
    public String toString() {
        PriceTable table = prices;
        return "model budgets " + budgets.keySet() + ", prices "
                + (table == null ? "none" : table.prices().keySet())
                + (meters == CallMeters.NONE ? "" : ", GenAI metrics");
    }

    /**
     * The settings of a {@link ModelCatalog}, as the integrations' builders inherit them.
     *
     * @param <B> the builder's own type, returned by each setter
     */
    public abstract static class Builder<B extends Builder<B>> {

        private Map<String, SharedBudget> budgets = Map.of();
        private @Nullable PriceTable prices;
        private CallMeters meters = CallMeters.NONE;

        /** For the integrations' builders. */
        protected Builder() {}

        /**
         * Sets the upstream cap of each model, charged together with the user's windows by every
         * call to that model, all or nothing; a model not in the map has no shared cap.
         *
         * @param modelBudgets the budget of each model name, as the call names the model
         * @return this builder
         * @throws NullPointerException if the map, a key or a value is {@code null}
         */
        public B modelBudgets(Map<String, SharedBudget> modelBudgets) {
            this.budgets = Map.copyOf(Objects.requireNonNull(modelBudgets, "modelBudgets"));
            return self();
        }

        /**
         * Sets the prices that charge spend windows ({@code usd_micros}), looked up by the call's
         * model name; none unless set. A call to a model the table does not price throws {@link
         * UnpricedModelException} when a spend window of the user's tier or the model's budget applies
         * to it, and passes uncharged in money otherwise.
         *
         * @param prices the prices, such as {@code PriceTable.of(Map.of("gpt-4o-mini",
         *     ModelPrice.perMillion("0.15", "0.075", "0.60")))}
         * @return this builder
         * @throws NullPointerException if {@code prices} is {@code null}
         */
        public B priceTable(PriceTable prices) {
            this.prices = Objects.requireNonNull(prices, "prices");
            return self();
        }

        /**
         * Records OpenTelemetry's GenAI client metrics for every call admitted through the catalog,
         * in this registry: {@code gen_ai.client.token.usage} (tokens per call by {@code
         * gen_ai.token.type} {@code input} and {@code output}) and {@code
         * gen_ai.client.operation.duration} (seconds from admission to settlement, with {@code
         * error.type} when the call did not complete), tagged {@code gen_ai.operation.name=chat},
         * {@code gen_ai.provider.name} (from the model's name: {@code openai}, {@code anthropic},
         * {@code gcp.gemini}, else {@code _OTHER}) and {@code gen_ai.request.model}. None unless set.
         * The registry is used, never changed. Spring AI's own observations record a meter of the
         * same name (a counter, other tags): give the registry to one of the two.
         *
         * @param registry the registry
         * @return this builder
         * @throws NullPointerException if {@code registry} is {@code null}
         */
        public B meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            this.meters = GenAiMeters.of(registry);
            return self();
        }

        /**
         * Returns the catalog of the settings so far.
         *
         * @return the catalog
         */
        protected final ModelCatalog catalog() {
            return new ModelCatalog(budgets, prices, meters);
        }

        @SuppressWarnings("unchecked")
        private B self() {
            return (B) this;
        }
    }
}
