package dev.ratelimit.langchain4j;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Bad configuration fails at build time, naming what is wrong. */
class LangChain4jRateLimiterBuilderTest {

    private final RateLimiter limiter =
            SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();

    @Test
    @DisplayName("null arguments are rejected, naming the argument")
    void nullsAreNamed() {
        assertThatThrownBy(() -> LangChain4jRateLimiter.builder(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("limiter");
        assertThatThrownBy(() -> LangChain4jRateLimiter.builder(limiter).user(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("user");
        assertThatThrownBy(() -> LangChain4jRateLimiter.builder(limiter).modelBudgets(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("modelBudgets");
        LangChain4jRateLimiter built = LangChain4jRateLimiter.builder(limiter)
                .tier(user -> TierPolicy.defaults().defaultTier())
                .build();
        assertThatThrownBy(() -> built.wrap(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("model");
    }

    @Test
    @DisplayName("a negative default of output tokens is rejected, and the tier resolver is required")
    void invalidConfigurationIsRejected() {
        assertThatThrownBy(() -> LangChain4jRateLimiter.builder(limiter).defaultMaxOutputTokens(-1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("defaultMaxOutputTokens");
        assertThatThrownBy(() -> LangChain4jRateLimiter.builder(limiter).build())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("tier");
    }
}
