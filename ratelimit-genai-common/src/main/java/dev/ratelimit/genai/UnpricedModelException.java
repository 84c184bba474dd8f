package dev.ratelimit.genai;

import dev.ratelimit.api.Window;
import java.util.Objects;

/**
 * Thrown instead of calling a model that has no price when a spend window applies to the call: a
 * call that cannot be charged in money is not made, rather than let through free. Nothing was
 * charged. Give the model a price, or remove the spend window.
 */
public final class UnpricedModelException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The model the price table does not price. */
    private final String model;

    /**
     * Creates the exception.
     *
     * @param model the model without a price
     * @param spendWindow a spend window that applies to the call
     */
    public UnpricedModelException(String model, Window spendWindow) {
        super("model '" + Objects.requireNonNull(model, "model") + "' has no price, and spend window '"
                + spendWindow.name() + "' applies: add the model to the price table");
        this.model = model;
    }

    /**
     * Returns the model without a price.
     *
     * @return the model's name
     */
    public String model() {
        return model;
    }
}
