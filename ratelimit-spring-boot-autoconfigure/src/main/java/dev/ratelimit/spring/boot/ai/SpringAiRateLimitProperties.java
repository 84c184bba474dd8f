package dev.ratelimit.spring.boot.ai;

import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The Spring AI integration's settings, under {@code ratelimit.spring-ai}. */
@ConfigurationProperties("ratelimit.spring-ai")
public class SpringAiRateLimitProperties {

    /** Whether every {@code ChatClient} gets the rate-limit advisor. */
    private boolean enabled = true;

    /** The completion tokens reserved for a call whose options name no {@code maxTokens}. */
    private long defaultMaxTokens = 1_024;

    /**
     * Whether the advisor records OpenTelemetry's GenAI client metrics ({@code
     * gen_ai.client.token.usage}, {@code gen_ai.client.operation.duration}) in the application's
     * {@code MeterRegistry}. Off by default: Spring AI's own observations record a meter named
     * {@code gen_ai.client.token.usage} too (a counter with other tags).
     */
    private boolean genAiMetrics;

    /**
     * Each model's upstream cap, shared by all users, by the model name the calls' options carry
     * (write names with dots in brackets: {@code "[gpt-4.1]"}).
     */
    private Map<String, Model> models = new LinkedHashMap<>();

    /**
     * Each model's price in US dollars per million tokens, for the tiers' spend windows ({@code
     * $<dollars>/<length>}), by the model name the calls' options carry, or a prefix ending in
     * {@code *} (in brackets: {@code "[claude-sonnet-4-5*]"}). None by default: a call to a model
     * without a price is refused when a spend window applies to it.
     */
    private Map<String, Price> prices = new LinkedHashMap<>();

    /** Creates the settings with their defaults. */
    public SpringAiRateLimitProperties() {}

    /**
     * Returns whether the advisor is on.
     *
     * @return {@code ratelimit.spring-ai.enabled}
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether the advisor is on.
     *
     * @param enabled whether it is
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Returns whether the advisor records OpenTelemetry's GenAI client metrics.
     *
     * @return {@code ratelimit.spring-ai.gen-ai-metrics}
     */
    public boolean isGenAiMetrics() {
        return genAiMetrics;
    }

    /**
     * Sets whether the advisor records OpenTelemetry's GenAI client metrics.
     *
     * @param genAiMetrics whether it does
     */
    public void setGenAiMetrics(boolean genAiMetrics) {
        this.genAiMetrics = genAiMetrics;
    }

    /**
     * Returns the default completion tokens.
     *
     * @return {@code ratelimit.spring-ai.default-max-tokens}
     */
    public long getDefaultMaxTokens() {
        return defaultMaxTokens;
    }

    /**
     * Sets the default completion tokens.
     *
     * @param defaultMaxTokens the tokens
     */
    public void setDefaultMaxTokens(long defaultMaxTokens) {
        this.defaultMaxTokens = defaultMaxTokens;
    }

    /**
     * Returns the models' caps.
     *
     * @return {@code ratelimit.spring-ai.models}
     */
    public Map<String, Model> getModels() {
        return models;
    }

    /**
     * Sets the models' caps.
     *
     * @param models the caps by model name
     */
    public void setModels(Map<String, Model> models) {
        this.models = models;
    }

    /**
     * Returns the models' prices.
     *
     * @return {@code ratelimit.spring-ai.prices}
     */
    public Map<String, Price> getPrices() {
        return prices;
    }

    /**
     * Sets the models' prices.
     *
     * @param prices the prices by model name or prefix
     */
    public void setPrices(Map<String, Price> prices) {
        this.prices = prices;
    }

    /**
     * Returns the price table of {@code ratelimit.spring-ai.prices}; empty (every model unpriced)
     * when there is none.
     *
     * @return the table
     * @throws IllegalStateException if a model's {@code input} or {@code output} price is missing
     * @throws IllegalArgumentException if a price is negative or a name holds {@code *} anywhere but
     *     at its end
     */
    public PriceTable priceTable() {
        Map<String, ModelPrice> table = new LinkedHashMap<>();
        prices.forEach((name, price) -> table.put(name, price.toModelPrice(name)));
        return PriceTable.of(table);
    }

    /**
     * Returns each capped model's shared budget, named {@code spring-ai/<model>}.
     *
     * @return the budgets by model name; models without any limit are left out
     */
    public Map<String, SharedBudget> modelBudgets() {
        Map<String, SharedBudget> budgets = new LinkedHashMap<>();
        models.forEach((name, model) -> {
            List<Window> windows = model.windows();
            if (!windows.isEmpty()) {
                budgets.put(name, new SharedBudget("spring-ai/" + name, windows));
            }
        });
        return budgets;
    }

    /** One model's upstream cap: what the provider allows the application's key per minute. */
    public static class Model {

        /** Tokens per minute, all users together. */
        private @Nullable Long tpm;

        /** Requests per minute, all users together. */
        private @Nullable Long rpm;

        /** Creates a cap without limits. */
        public Model() {}

        /**
         * Returns the tokens per minute.
         *
         * @return the limit, or {@code null} for none
         */
        public @Nullable Long getTpm() {
            return tpm;
        }

        /**
         * Sets the tokens per minute.
         *
         * @param tpm the limit
         */
        public void setTpm(@Nullable Long tpm) {
            this.tpm = tpm;
        }

        /**
         * Returns the requests per minute.
         *
         * @return the limit, or {@code null} for none
         */
        public @Nullable Long getRpm() {
            return rpm;
        }

        /**
         * Sets the requests per minute.
         *
         * @param rpm the limit
         */
        public void setRpm(@Nullable Long rpm) {
            this.rpm = rpm;
        }

        List<Window> windows() {
            List<Window> windows = new ArrayList<>();
            Long requests = rpm;
            if (requests != null) {
                windows.add(new Window("rpm", requests, Duration.ofMinutes(1)));
            }
            Long tokens = tpm;
            if (tokens != null) {
                windows.add(Window.tokens("tpm", tokens, Duration.ofMinutes(1)));
            }
            return windows;
        }
    }

    /**
     * One model's price in US dollars per million tokens, such as {@code input: 2.50}, {@code
     * cached-input: 1.25}, {@code output: 10.00}.
     */
    public static class Price {

        /** Dollars per million fresh input tokens; required. */
        private @Nullable BigDecimal input;

        /** Dollars per million input tokens read from the prompt cache; the input price unless set. */
        private @Nullable BigDecimal cachedInput;

        /** Dollars per million input tokens written to the prompt cache; the input price unless set. */
        private @Nullable BigDecimal cacheWrite;

        /** Dollars per million output tokens, reasoning included; required. */
        private @Nullable BigDecimal output;

        /** Creates a price without figures. */
        public Price() {}

        /**
         * Returns the input price.
         *
         * @return dollars per million tokens, or {@code null} when unset
         */
        public @Nullable BigDecimal getInput() {
            return input;
        }

        /**
         * Sets the input price.
         *
         * @param input dollars per million tokens
         */
        public void setInput(@Nullable BigDecimal input) {
            this.input = input;
        }

        /**
         * Returns the cached-input price.
         *
         * @return dollars per million tokens, or {@code null} when unset
         */
        public @Nullable BigDecimal getCachedInput() {
            return cachedInput;
        }

        /**
         * Sets the cached-input price.
         *
         * @param cachedInput dollars per million tokens
         */
        public void setCachedInput(@Nullable BigDecimal cachedInput) {
            this.cachedInput = cachedInput;
        }

        /**
         * Returns the cache-write price.
         *
         * @return dollars per million tokens, or {@code null} when unset
         */
        public @Nullable BigDecimal getCacheWrite() {
            return cacheWrite;
        }

        /**
         * Sets the cache-write price.
         *
         * @param cacheWrite dollars per million tokens
         */
        public void setCacheWrite(@Nullable BigDecimal cacheWrite) {
            this.cacheWrite = cacheWrite;
        }

        /**
         * Returns the output price.
         *
         * @return dollars per million tokens, or {@code null} when unset
         */
        public @Nullable BigDecimal getOutput() {
            return output;
        }

        /**
         * Sets the output price.
         *
         * @param output dollars per million tokens
         */
        public void setOutput(@Nullable BigDecimal output) {
            this.output = output;
        }

        ModelPrice toModelPrice(String model) {
            BigDecimal in = required(input, model, "input");
            BigDecimal out = required(output, model, "output");
            BigDecimal cached = cachedInput;
            BigDecimal write = cacheWrite;
            return new ModelPrice(in, cached != null ? cached : in, write != null ? write : in, out);
        }

        private static BigDecimal required(@Nullable BigDecimal price, String model, String name) {
            if (price == null) {
                throw new IllegalStateException("ratelimit.spring-ai.prices." + model + "." + name
                        + " is required: dollars per million tokens, such as 2.50");
            }
            return price;
        }
    }
}
