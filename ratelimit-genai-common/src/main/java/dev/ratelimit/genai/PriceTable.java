package dev.ratelimit.genai;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Prices by model name: what the gateway and the framework integrations charge to spend windows.
 *
 * <p>A name is exact ({@code gpt-4o}) or a prefix ending in {@code *} ({@code claude-sonnet-4-5*},
 * which also prices the dated names a provider answers with); an exact name wins, then the longest
 * prefix. A model the table does not price cannot be charged in money: {@link #priceOf} says so with
 * {@code null}, and callers refuse it where a spend window applies rather than let it through free.
 */
public final class PriceTable {

    private final Map<String, ModelPrice> prices;

    private PriceTable(Map<String, ModelPrice> prices) {
        this.prices = prices;
    }

    /**
     * Creates a table from prices by model name or prefix.
     *
     * @param prices the prices; names are exact or end in {@code *}
     * @return the table
     * @throws NullPointerException if the map, a name or a price is {@code null}
     * @throws IllegalArgumentException if a name is blank or holds {@code *} anywhere but at its end
     */
    public static PriceTable of(Map<String, ModelPrice> prices) {
        Objects.requireNonNull(prices, "prices must not be null");
        Map<String, ModelPrice> copy = new LinkedHashMap<>();
        prices.forEach((model, price) -> {
            Objects.requireNonNull(model, "a model name must not be null");
            Objects.requireNonNull(price, "the price of '" + model + "' must not be null");
            if (model.isBlank()) {
                throw new IllegalArgumentException("a model name must not be blank");
            }
            if (model.indexOf('*') >= 0 && model.indexOf('*') != model.length() - 1) {
                throw new IllegalArgumentException(
                        "model '" + model + "': '*' may only end a name, as a prefix such as 'claude-*'");
            }
            copy.put(model, price);
        });
        return new PriceTable(Collections.unmodifiableMap(copy));
    }

    /**
     * Returns the price of a model: its exact entry, else the longest prefix entry that matches.
     *
     * @param model the model name as the call gives it
     * @return the price, or {@code null} when the table does not price the model
     */
    public @Nullable ModelPrice priceOf(String model) {
        ModelPrice exact = prices.get(model);
        if (exact != null) {
            return exact;
        }
        ModelPrice best = null;
        int longest = -1;
        for (Map.Entry<String, ModelPrice> entry : prices.entrySet()) {
            String name = entry.getKey();
            if (name.endsWith("*")
                    && model.startsWith(name.substring(0, name.length() - 1))
                    && name.length() > longest) {
                best = entry.getValue();
                longest = name.length();
            }
        }
        return best;
    }

    /**
     * Returns the prices by name, in the order given.
     *
     * @return the entries; names are exact or end in {@code *}
     */
    public Map<String, ModelPrice> prices() {
        return prices;
    }

    @Override
    public String toString() {
        return "PriceTable" + prices.keySet();
    }
}
