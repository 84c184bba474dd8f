/**
 * LangChain4j integration: {@link dev.ratelimit.langchain4j.LangChain4jRateLimiter} wraps a {@code
 * ChatModel} or {@code StreamingChatModel} so every call to the model reserves its estimated tokens
 * for the end user (and the model's shared cap) first, and settles to the usage the provider reports
 * after; a refused call throws {@link dev.ratelimit.genai.RateLimitExceededException} and never
 * reaches the model. With a {@link dev.ratelimit.genai.PriceTable}, spend windows are charged too: the
 * worst case reserved first, the cost of the reported usage settled after.
 */
@NullMarked
package dev.ratelimit.langchain4j;

import org.jspecify.annotations.NullMarked;
