package dev.ratelimit.spring.boot.web.internal;

import dev.ratelimit.http.RateLimitResponses;
import dev.ratelimit.http.RetryAfter;
import dev.ratelimit.spring.boot.RateLimitProperties;
import java.time.Clock;
import java.time.Duration;

/** The HTTP contract's writer as {@code ratelimit.headers.*} configures it, for both web stacks. Not API. */
public final class ContractResponses {

    private ContractResponses() {}

    /**
     * Creates the writer.
     *
     * @param properties the settings
     * @return the writer
     */
    public static RateLimitResponses of(RateLimitProperties properties) {
        return RateLimitResponses.builder()
                .headers(properties.getHeaders().getFamilies())
                .clock(Clock.systemUTC()) // the Anthropic family's reset times
                .openAiErrors(properties.getHeaders().isOpenaiErrors())
                // at least a second, as the servlet filter's builder requires
                .unavailableRetryAfter(Duration.ofSeconds(RetryAfter.seconds(properties.getUnavailableRetryAfter())))
                .build();
    }
}
