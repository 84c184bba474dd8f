package dev.ratelimit.gateway;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.Window;

/**
 * How the metered endpoints word a refusal by a window, in the message that OpenAI's clients raise:
 * the tenant's own limit, or the upstream's cap that all tenants share. Headers, status and body
 * shape are the library's ({@code RateLimitResponses}).
 */
final class Rejection {

    private Rejection() {}

    /** The unit a refusal is counted under in {@code gateway_refusals_total}. */
    static String unit(Decision decision) {
        return decision.window().isTokens() ? "tokens" : "requests";
    }

    /** The message of a request that can never fit, with its estimate. */
    static String tooLargeMessage(Decision decision, long estimatedTokens) {
        Window window = decision.window();
        return "This request needs an estimated " + estimatedTokens + " tokens (prompt plus the completion tokens it"
                + " allows), more than " + subject(decision) + " limit of " + window.limit() + " tokens per window '"
                + window.name() + "'; lower max_completion_tokens (or max_tokens) or shorten the prompt.";
    }

    /** The message of a request a used-up window refused. */
    static String message(Decision decision) {
        Window window = decision.window();
        long seconds = decision.retryAfterSeconds();
        return "Rate limit reached: " + subject(decision) + " limit of " + window.limit() + " " + unit(decision)
                + " per window '" + window.name() + "' is used up; retry in " + seconds
                + (seconds == 1 ? " second." : " seconds.");
    }

    private static String subject(Decision decision) {
        return decision.budget() == null ? "your" : "the upstream's shared (" + decision.budget() + ")";
    }
}
