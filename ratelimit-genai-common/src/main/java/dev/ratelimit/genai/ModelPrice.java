package dev.ratelimit.genai;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Objects;

/**
 * A model's price in US dollars per million tokens, by kind of token: what a call costs, in
 * micro-dollars ({@link dev.ratelimit.api.Window.Unit#USD_MICROS}), for spend windows.
 *
 * <p>A price of {@code $p} per million tokens is {@code p} micro-dollars per token, so a cost in
 * micro-dollars is the sum of tokens times prices, rounded up to a whole micro-dollar: a budget
 * never counts a call cheaper than it was, by less than one micro-dollar per call.
 *
 * @param input the price of fresh input tokens
 * @param cachedInput the price of input tokens read from the prompt cache
 * @param cacheWrite the price of input tokens written to the prompt cache
 * @param output the price of output tokens (reasoning included)
 */
public record ModelPrice(BigDecimal input, BigDecimal cachedInput, BigDecimal cacheWrite, BigDecimal output) {

    /**
     * Validates the prices.
     *
     * @param input the price of fresh input tokens
     * @param cachedInput the price of input tokens read from the prompt cache
     * @param cacheWrite the price of input tokens written to the prompt cache
     * @param output the price of output tokens (reasoning included)
     * @throws NullPointerException if a price is {@code null}
     * @throws IllegalArgumentException if a price is negative
     */
    public ModelPrice {
        check(input, "input");
        check(cachedInput, "cachedInput");
        check(cacheWrite, "cacheWrite");
        check(output, "output");
    }

    /**
     * Creates a price whose cache writes cost as much as fresh input.
     *
     * @param input dollars per million fresh input tokens, such as {@code "2.50"}
     * @param cachedInput dollars per million cached input tokens
     * @param output dollars per million output tokens
     * @return the price
     * @throws NumberFormatException if a price is not a decimal number
     * @throws IllegalArgumentException if a price is negative
     */
    public static ModelPrice perMillion(String input, String cachedInput, String output) {
        BigDecimal in = new BigDecimal(input);
        return new ModelPrice(in, new BigDecimal(cachedInput), in, new BigDecimal(output));
    }

    /**
     * Returns this price with another price for cache writes (Anthropic bills them apart).
     *
     * @param perMillion dollars per million tokens written to the prompt cache
     * @return the price
     */
    public ModelPrice withCacheWrite(BigDecimal perMillion) {
        return new ModelPrice(input, cachedInput, perMillion, output);
    }

    /**
     * Returns what a call cost, rounded up to a whole micro-dollar.
     *
     * @param usage the tokens the call used
     * @return the cost in micro-dollars
     * @throws ArithmeticException if the cost exceeds {@code Long.MAX_VALUE} micro-dollars
     */
    public long costMicros(TokenUsage usage) {
        Objects.requireNonNull(usage, "usage must not be null");
        BigDecimal micros = input.multiply(BigDecimal.valueOf(usage.input()))
                .add(cachedInput.multiply(BigDecimal.valueOf(usage.cachedInput())))
                .add(cacheWrite.multiply(BigDecimal.valueOf(usage.cacheWrite())))
                .add(output.multiply(BigDecimal.valueOf(usage.output())));
        return micros.setScale(0, RoundingMode.CEILING).longValueExact();
    }

    /**
     * Returns the most a call can cost before it is made: every prompt token at the dearest input
     * price (fresh, cached or written to the cache) and every output token it may produce at the
     * output price, rounded up.
     *
     * @param promptTokens the counted prompt, at least 0
     * @param maxOutputTokens the most the call may produce, at least 0
     * @return the worst case in micro-dollars
     * @throws IllegalArgumentException if a count is negative
     * @throws ArithmeticException if the cost exceeds {@code Long.MAX_VALUE} micro-dollars
     */
    public long worstCaseMicros(long promptTokens, long maxOutputTokens) {
        BigDecimal dearestInput = input.max(cachedInput).max(cacheWrite);
        TokenUsage worst = TokenUsage.of(promptTokens, maxOutputTokens);
        return new ModelPrice(dearestInput, dearestInput, dearestInput, output).costMicros(worst);
    }

    private static void check(BigDecimal price, String name) {
        Objects.requireNonNull(price, name + " must not be null");
        if (price.signum() < 0) {
            throw new IllegalArgumentException(name + " must not be negative, was " + price);
        }
    }
}
