/**
 * A rate-limiting gateway for OpenAI's, Anthropic's and Google's Gemini APIs: per-tenant request,
 * token and dollar budgets, team and organisation budgets, upstream caps per model, a concurrency
 * cap per tenant, streamed answers relayed and settled to their usage, batches, routing by model
 * among upstreams with cooldowns, in front of real providers or a built-in mock model. This package
 * holds the process, {@link dev.ratelimit.gateway.GatewayServer}, and its composition root, {@code
 * Assembly}; the
 * packages below it are laid out by role, each using only those beneath it (docs/gateway.md,
 * "Design: packages and layers").
 *
 * <p>Not API: only the process, its configuration file and its HTTP interfaces are the product's
 * contract; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
