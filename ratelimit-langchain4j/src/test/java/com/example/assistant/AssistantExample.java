package com.example.assistant;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.langchain4j.LangChain4jRateLimiter;
import java.time.Duration;
import java.util.Map;

/** The example of docs/langchain4j.md, compiled by the module's build so the page stays true. */
public final class AssistantExample {

    interface Assistant {
        String chat(String message);
    }

    /** Who is calling: set by your web layer per request (here, by main). */
    private static final ThreadLocal<String> CURRENT_USER = new ThreadLocal<>();

    public static void main(String[] args) {
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
        TierPolicy tiers = TierPolicy.builder()
                .tier("free", Window.of(5, Duration.ofMinutes(1)), Window.tokens(20_000, Duration.ofDays(1)))
                .tier("pro", Window.of(60, Duration.ofMinutes(1)), Window.tokens(1_000_000, Duration.ofDays(1)))
                .defaultTier("free")
                .build();
        Map<String, String> tierOfUser = Map.of("alice", "pro");

        LangChain4jRateLimiter rateLimit = LangChain4jRateLimiter.builder(limiter)
                .user(CURRENT_USER::get)
                .tier(user -> tiers.resolve(tierOfUser.get(user)))
                .modelBudgets(Map.of(
                        "gpt-4o-mini",
                        SharedBudget.of(
                                "openai/gpt-4o-mini",
                                Window.of(500, Duration.ofMinutes(1)),
                                Window.tokens(200_000, Duration.ofMinutes(1)))))
                .build();

        ChatModel model = OpenAiChatModel.builder()
                .apiKey(System.getenv("OPENAI_API_KEY"))
                .modelName("gpt-4o-mini")
                .build();
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(rateLimit.wrap(model)) // the one line
                .build();

        CURRENT_USER.set("alice");
        try {
            System.out.println(assistant.chat("Hello!"));
        } catch (RateLimitExceededException e) {
            System.out.println("rate limited, retry in " + e.decision().retryAfterSeconds() + " s");
        } finally {
            CURRENT_USER.remove();
        }
    }

    private AssistantExample() {}
}
