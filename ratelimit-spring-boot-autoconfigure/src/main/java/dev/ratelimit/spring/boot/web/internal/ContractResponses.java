package dev.ratelimit.spring.boot.web.internal;

import dev.ratelimit.servlet.internal.RateLimitResponses;
import dev.ratelimit.spring.boot.RateLimitProperties;

/** The 429 contract's writer as {@code ratelimit.headers.*} configures it, for both web stacks. Not API. */
public final class ContractResponses {

    private ContractResponses() {}

    /**
     * Creates the writer.
     *
     * @param properties the settings
     * @return the writer
     */
    public static RateLimitResponses of(RateLimitProperties properties) {
        RateLimitProperties.Headers headers = properties.getHeaders();
        long millis = properties.getUnavailableRetryAfter().toMillis();
        long retryAfter = Math.max(1, millis / 1000 + (millis % 1000 > 0 ? 1 : 0));
        return new RateLimitResponses(
                headers.isClassic(), headers.isIetf(), headers.isOpenai(), headers.isOpenaiErrors(), retryAfter);
    }
}
