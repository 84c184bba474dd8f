/**
 * The Jakarta Servlet binding of ratelimit: {@link dev.ratelimit.servlet.RateLimitFilter} checks
 * each request against the caller's tier and answers {@code 429 Too Many Requests} with honest
 * {@code Retry-After} and rate-limit headers.
 */
@NullMarked
package dev.ratelimit.servlet;

import org.jspecify.annotations.NullMarked;
