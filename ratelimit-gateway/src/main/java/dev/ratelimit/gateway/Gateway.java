package dev.ratelimit.gateway;

/**
 * The parts a request passes through, shared by the servlets.
 *
 * @param config the validated configuration
 * @param tokens the token counter
 * @param admission the doorway to the limiter and the concurrency slots
 * @param headers the rate-limit header writer
 * @param metrics the gateway's meters
 * @param upstream the server behind the gateway
 * @param slots the concurrency slots
 * @param board the latest window states, for the status page
 * @param store what the budgets are kept in, for messages
 */
record Gateway(
        GatewayConfig config,
        TokenCounter tokens,
        Admission admission,
        RateLimitHeaders headers,
        GatewayMetrics metrics,
        Upstream upstream,
        Slots slots,
        StatusBoard board,
        String store) {}
