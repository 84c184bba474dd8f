package com.example.chat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.springai.RateLimitAdvisor;
import java.time.Duration;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/** The example of docs/spring-ai.md, compiled with the module's tests so that it stays true. */
public final class ChatExample {

    private ChatExample() {}

    /** Builds the client: every call to the model reserved for its end user and for gpt-4o's cap. */
    public static ChatClient chatClient(String apiKey) {
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
        TierPolicy tiers = TierPolicy.builder()
                .tier("free", Window.of(5, Duration.ofMinutes(1)), Window.tokens(20_000, Duration.ofDays(1)))
                .defaultTier("free")
                .build();
        RateLimitAdvisor rateLimit = RateLimitAdvisor.builder(limiter, tiers)
                .modelBudgets(Map.of(
                        "gpt-4o",
                        SharedBudget.of("openai/gpt-4o", Window.tokens("tpm", 300_000, Duration.ofMinutes(1)))))
                .defaultMaxTokens(1_024)
                .build();
        OpenAiChatModel model = OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder()
                        .apiKey(apiKey)
                        .model("gpt-4o")
                        .build())
                .build();
        return ChatClient.builder(model).defaultAdvisors(rateLimit).build();
    }

    /** Asks on behalf of one end user; a refusal says when to retry. */
    public static String ask(ChatClient chat, String userId, String question) {
        try {
            return chat.prompt(question)
                    .advisors(a -> a.param(RateLimitAdvisor.USER, userId))
                    .call()
                    .content();
        } catch (RateLimitExceededException e) {
            return "Try again in " + e.decision().retryAfterSeconds() + " s ("
                    + e.decision().window().name() + ")";
        }
    }
}
