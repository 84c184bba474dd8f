/**
 * Spring AI integration: {@link dev.ratelimit.springai.RateLimitAdvisor}, a {@code ChatClient}
 * advisor that reserves every call to the model (each round of a tool-calling loop included) for the
 * end user and the model's shared cap first, and settles to the usage the provider reports after; a
 * refused call throws {@link dev.ratelimit.genai.RateLimitExceededException} and never reaches the
 * model. With a {@link dev.ratelimit.genai.PriceTable}, spend windows are charged too: the worst case
 * reserved first, the cost of the reported usage settled after.
 */
@NullMarked
package dev.ratelimit.springai;

import org.jspecify.annotations.NullMarked;
