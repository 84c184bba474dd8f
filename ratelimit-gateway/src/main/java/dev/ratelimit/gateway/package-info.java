/**
 * An OpenAI-compatible rate-limiting gateway: per-tenant request and token budgets, upstream caps
 * per model, a concurrency cap per tenant and streaming pass-through, in front of any
 * OpenAI-compatible server or a built-in mock model; start it with {@link
 * dev.ratelimit.gateway.GatewayServer#main(String[])}.
 */
@NullMarked
package dev.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
