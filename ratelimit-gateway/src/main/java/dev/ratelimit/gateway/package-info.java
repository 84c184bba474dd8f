/**
 * A rate-limiting gateway for OpenAI's and Anthropic's APIs: per-tenant request, token and dollar
 * budgets, team and organisation budgets, upstream caps per model, a concurrency cap per tenant,
 * streamed answers relayed and settled to their usage, routing by model among upstreams with
 * cooldowns, in front of OpenAI- or Anthropic-protocol servers or a built-in mock model; start it
 * with {@link dev.ratelimit.gateway.GatewayServer#main(String[])}. Not API: only the process, its
 * configuration file and its HTTP interfaces are the product's contract; every type here may change.
 */
@NullMarked
package dev.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
