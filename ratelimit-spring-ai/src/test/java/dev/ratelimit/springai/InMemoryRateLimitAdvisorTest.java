package dev.ratelimit.springai;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;

/** The advisor over the in-memory store. */
class InMemoryRateLimitAdvisorTest extends RateLimitAdvisorContract {

    @Override
    RateLimiter newLimiter() {
        return SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
    }
}
