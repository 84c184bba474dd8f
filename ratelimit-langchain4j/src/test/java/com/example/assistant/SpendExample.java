package com.example.assistant;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.langchain4j.LangChain4jRateLimiter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** The money example of docs/langchain4j.md, compiled by the module's build so the page stays true. */
public final class SpendExample {

    interface Assistant {
        String chat(String message);
    }

    /** Who is calling: set by your web layer per request (here, by main). */
    private static final ThreadLocal<String> CURRENT_USER = new ThreadLocal<>();

    public static void main(String[] args) {
        RateLimiter limiter =
                SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
        TierPolicy tiers = TierPolicy.builder()
                .tier("free", Window.of(5, Duration.ofMinutes(1)), TierPolicy.parseWindow("spend-day", "$0.50/1d@1m"))
                .tier(
                        "pro",
                        Window.of(60, Duration.ofMinutes(1)),
                        TierPolicy.parseWindow("spend-day", "$5/1d@1m"),
                        TierPolicy.parseWindow("spend-month", "$100/30d@1h"))
                .defaultTier("free")
                .build();
        Map<String, String> tierOfUser = Map.of("alice", "pro");
        // dollars per million tokens: input, cached input, output (list prices: state your provider's own)
        Map<String, ModelPrice> prices = new LinkedHashMap<>();
        prices.put("gpt-4o", ModelPrice.perMillion("2.50", "1.25", "10.00"));
        prices.put("gpt-4o-mini", ModelPrice.perMillion("0.15", "0.075", "0.60"));
        prices.put("gpt-4.1-mini", ModelPrice.perMillion("0.40", "0.10", "1.60"));

        LangChain4jRateLimiter rateLimit = LangChain4jRateLimiter.builder(limiter)
                .user(CURRENT_USER::get)
                .tier(user -> tiers.resolve(tierOfUser.get(user)))
                .priceTable(PriceTable.of(prices))
                .defaultMaxOutputTokens(1_024) // a call without a maximum reserves this much output at the output price
                .build();

        ChatModel model = OpenAiChatModel.builder()
                .apiKey(System.getenv("OPENAI_API_KEY"))
                .modelName("gpt-4o-mini")
                .build();
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(rateLimit.wrap(model))
                .build();

        CURRENT_USER.set("alice");
        try {
            System.out.println(assistant.chat("Hello!"));
        } catch (RateLimitExceededException e) {
            System.out.println("budget '" + e.decision().window().name() + "' spent, back in "
                    + e.decision().retryAfterSeconds() + " s");
        } finally {
            CURRENT_USER.remove();
        }
    }

    private SpendExample() {}
}
