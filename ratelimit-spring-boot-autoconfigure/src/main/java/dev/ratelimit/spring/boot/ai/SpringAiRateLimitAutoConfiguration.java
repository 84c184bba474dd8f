package dev.ratelimit.spring.boot.ai;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.TierPolicy;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.spring.boot.RateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.RateLimitProperties;
import dev.ratelimit.spring.boot.TierResolver;
import dev.ratelimit.spring.boot.web.SecurityEndUserResolver;
import dev.ratelimit.spring.boot.web.TierResolverConfiguration;
import dev.ratelimit.spring.boot.web.reactive.RateLimitExceededWebExceptionHandler;
import dev.ratelimit.spring.boot.web.servlet.RateLimitExceededExceptionResolver;
import dev.ratelimit.springai.EndUserResolver;
import dev.ratelimit.springai.RateLimitAdvisor;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.ai.chat.client.ChatClientCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Spring AI, when {@code ratelimit-spring-ai} and Spring AI's {@code ChatClient} are on the class
 * path: a {@link RateLimitAdvisor} bean, a {@link ChatClientCustomizer} that adds it to every {@code
 * ChatClient.Builder} Spring AI's auto-configuration creates, the end user from Spring Security, the
 * models' caps from {@code ratelimit.spring-ai.models}, their prices for spend windows from the
 * application's {@link PriceTable} bean, else {@code ratelimit.spring-ai.prices}, and on either web stack a refused model call
 * ({@code RateLimitExceededException}) answered with the HTTP contract's 429. Off with {@code
 * ratelimit.spring-ai.enabled=false}.
 */
@AutoConfiguration(
        after = RateLimitAutoConfiguration.class,
        beforeName = "org.springframework.ai.model.chat.client.autoconfigure.ChatClientAutoConfiguration")
@ConditionalOnClass(
        name = {"dev.ratelimit.springai.RateLimitAdvisor", "org.springframework.ai.chat.client.ChatClientCustomizer"})
@ConditionalOnBean(RateLimiter.class)
@ConditionalOnProperty(name = "ratelimit.spring-ai.enabled", matchIfMissing = true)
@EnableConfigurationProperties(SpringAiRateLimitProperties.class)
@Import(TierResolverConfiguration.class)
public class SpringAiRateLimitAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public SpringAiRateLimitAutoConfiguration() {}

    /**
     * Finds the end user of a model call that names none: the authenticated principal.
     *
     * @param tiers finds the principal's tier
     * @return the resolver
     */
    @Bean
    @ConditionalOnMissingBean
    public EndUserResolver rateLimitEndUserResolver(TierResolver tiers) {
        return new SecurityEndUserResolver(tiers);
    }

    /**
     * The advisor: every call to the model reserved for its end user and the model's cap, and priced
     * for spend windows.
     *
     * @param limiter the limiter
     * @param policy the tiers
     * @param users finds the end user
     * @param properties the {@code ratelimit.spring-ai.*} settings
     * @param prices the application's price table, which replaces {@code ratelimit.spring-ai.prices}
     * @param registries the application's meter registry, for {@code ratelimit.spring-ai.gen-ai-metrics}
     * @return the advisor
     */
    @Bean
    @ConditionalOnMissingBean
    public RateLimitAdvisor rateLimitAdvisor(
            RateLimiter limiter,
            TierPolicy policy,
            EndUserResolver users,
            SpringAiRateLimitProperties properties,
            ObjectProvider<PriceTable> prices,
            ObjectProvider<MeterRegistry> registries) {
        RateLimitAdvisor.Builder builder = RateLimitAdvisor.builder(limiter, policy)
                .endUserResolver(users)
                .modelBudgets(properties.modelBudgets())
                .priceTable(prices.getIfAvailable(properties::priceTable))
                .defaultMaxTokens(properties.getDefaultMaxTokens());
        MeterRegistry registry = properties.isGenAiMetrics() ? registries.getIfUnique() : null;
        if (registry != null) {
            builder.meterRegistry(registry);
        }
        return builder.build();
    }

    /**
     * Adds the advisor to every {@code ChatClient.Builder}.
     *
     * @param advisor the advisor
     * @return the customizer
     */
    @Bean
    @ConditionalOnMissingBean(name = "rateLimitChatClientCustomizer")
    public ChatClientCustomizer rateLimitChatClientCustomizer(RateLimitAdvisor advisor) {
        return builder -> builder.defaultAdvisors(advisor);
    }

    /** A refused model call in a Spring MVC handler: the HTTP contract's 429. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
    static class Servlet {

        @Bean
        RateLimitExceededExceptionResolver rateLimitExceededExceptionResolver(RateLimitProperties properties) {
            return new RateLimitExceededExceptionResolver(properties);
        }
    }

    /** A refused model call in a WebFlux handler: the HTTP contract's 429. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    static class Reactive {

        @Bean
        RateLimitExceededWebExceptionHandler rateLimitExceededWebExceptionHandler(RateLimitProperties properties) {
            return new RateLimitExceededWebExceptionHandler(properties);
        }
    }
}
