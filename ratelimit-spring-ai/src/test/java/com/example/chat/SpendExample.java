package com.example.chat;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.genai.RateLimitExceededException;
import dev.ratelimit.genai.UnpricedModelException;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import dev.ratelimit.springai.RateLimitAdvisor;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/** The money example of docs/spring-ai.md, compiled with the module's tests so that it stays true. */
public final class SpendExample {

    private SpendExample() {}

    /** Builds the client: every call to the model charged to its end user's requests and dollars. */
    public static ChatClient chatClient(String apiKey) {
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
        // dollars per million tokens: input, cached input, output (list prices: state your provider's own)
        Map<String, ModelPrice> prices = new LinkedHashMap<>();
        prices.put("gpt-4o", ModelPrice.perMillion("2.50", "1.25", "10.00"));
        prices.put("gpt-4o-mini", ModelPrice.perMillion("0.15", "0.075", "0.60"));
        prices.put("gpt-4.1-mini", ModelPrice.perMillion("0.40", "0.10", "1.60"));
        RateLimitAdvisor rateLimit = RateLimitAdvisor.builder(limiter, tiers)
                .priceTable(PriceTable.of(prices))
                .defaultMaxTokens(1_024) // a call without maxTokens reserves this much output at the output price
                .build();
        OpenAiChatModel model = OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder()
                        .apiKey(apiKey)
                        .model("gpt-4o-mini")
                        .build())
                .build();
        return ChatClient.builder(model).defaultAdvisors(rateLimit).build();
    }

    /** Asks on behalf of one end user of a tier; a spent budget says when it comes back. */
    public static String ask(ChatClient chat, String userId, String tier, String question) {
        try {
            return chat.prompt(question)
                    .advisors(a -> a.param(RateLimitAdvisor.USER, userId).param(RateLimitAdvisor.TIER, tier))
                    .call()
                    .content();
        } catch (RateLimitExceededException e) {
            return "Budget '" + e.decision().window().name() + "' spent; try again in "
                    + e.decision().retryAfterSeconds() + " s";
        } catch (UnpricedModelException e) {
            throw new IllegalStateException("add " + e.model() + " to the price table", e);
        }
    }
}
