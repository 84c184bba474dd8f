/**
 * What the GenAI framework integrations share: {@link dev.ratelimit.genai.ModelCall}, one reservation
 * per call to the model settled to the provider's usage; {@link dev.ratelimit.genai.TokenCounts},
 * the one token-count policy a call's estimate uses (the gateway's too); {@link dev.ratelimit.genai.PriceTable} and {@link
 * dev.ratelimit.genai.ModelPrice}, what a call costs for spend windows, from its {@link
 * dev.ratelimit.genai.TokenUsage}; {@link dev.ratelimit.genai.ModelCatalog}, each model's cap and price
 * as both integrations' builders configure them; and {@link dev.ratelimit.genai.RateLimitExceededException}, the
 * refusal thrown instead of calling the model.
 */
@NullMarked
package dev.ratelimit.genai;

import org.jspecify.annotations.NullMarked;
