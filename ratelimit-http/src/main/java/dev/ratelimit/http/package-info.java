/**
 * The HTTP rules every front of the limiter shares (the servlet filter, Spring MVC and WebFlux, the
 * gateway), with no servlet or framework dependency: the rate-limit header families ({@link
 * HeaderFamily}), {@code Retry-After} and {@code retry-after-ms} rounding ({@link RetryAfter}), the
 * 429, 400 and 503 answers and their messages in a plain, OpenAI- or Anthropic-shaped body ({@link
 * RateLimitResponses}, {@link ErrorShape}, {@link Refusal}), and the budget keys of callers ({@link
 * CallerKeys}).
 *
 * <p>Headers are written through a {@code BiConsumer<String, String>} (name, value), which any
 * response type adapts to in one method reference, such as {@code response::setHeader}.
 */
@NullMarked
package dev.ratelimit.http;

import org.jspecify.annotations.NullMarked;
