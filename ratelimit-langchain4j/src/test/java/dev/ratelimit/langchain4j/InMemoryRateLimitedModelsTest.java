package dev.ratelimit.langchain4j;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;

/** The LangChain4j decorators over the in-memory store. */
class InMemoryRateLimitedModelsTest extends RateLimitedModelsContract {

    @Override
    RateLimiter newLimiter() {
        return SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
    }
}
