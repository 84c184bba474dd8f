package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.PriceTable;
import dev.ratelimit.spring.boot.ai.SpringAiRateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.ai.SpringAiRateLimitProperties;
import dev.ratelimit.springai.EndUserResolver;
import dev.ratelimit.springai.RateLimitAdvisor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClientCustomizer;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The conditions of the Spring AI auto-configuration: on by default, switchable, absent without Spring AI. */
class SpringAiAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(RateLimitAutoConfiguration.class, SpringAiRateLimitAutoConfiguration.class));

    @Test
    void withSpringAiTheAdvisorAndTheCustomizerAreThere() {
        runner.withPropertyValues(
                        "ratelimit.spring-ai.models.gpt-4o.tpm=300000",
                        "ratelimit.spring-ai.models.gpt-4o.rpm=500",
                        "ratelimit.spring-ai.models.[gpt-4.1].tpm=1000")
                .run(context -> {
                    assertThat(context)
                            .hasSingleBean(RateLimitAdvisor.class)
                            .hasSingleBean(ChatClientCustomizer.class)
                            .hasSingleBean(EndUserResolver.class);
                    var budgets =
                            context.getBean(SpringAiRateLimitProperties.class).modelBudgets();
                    assertThat(budgets).containsOnlyKeys("gpt-4o", "gpt-4.1");
                    assertThat(budgets.get("gpt-4o").name()).isEqualTo("spring-ai/gpt-4o");
                    assertThat(budgets.get("gpt-4o").windows())
                            .extracting(window -> window.name() + "=" + window.limit())
                            .containsExactly("rpm=500", "tpm=300000");
                });
    }

    @Test
    void genAiMetricsOnlyWhenAskedAndARegistryIsThere() {
        runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> assertThat(
                                context.getBean(RateLimitAdvisor.class).toString())
                        .doesNotContain("GenAI metrics"));
        runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("ratelimit.spring-ai.gen-ai-metrics=true")
                .run(context -> assertThat(
                                context.getBean(RateLimitAdvisor.class).toString())
                        .contains("GenAI metrics"));
        runner.withPropertyValues("ratelimit.spring-ai.gen-ai-metrics=true")
                .run(context -> assertThat(
                                context.getBean(RateLimitAdvisor.class).toString())
                        .as("no registry, no metrics")
                        .doesNotContain("GenAI metrics"));
    }

    @Test
    void theSwitchTurnsItOff() {
        runner.withPropertyValues("ratelimit.spring-ai.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(RateLimitAdvisor.class)
                        .doesNotHaveBean(ChatClientCustomizer.class));
    }

    @Test
    void withoutSpringAiOrTheModuleNothingIsConfigured() {
        for (Class<?> hidden : List.of(ChatClientCustomizer.class, RateLimitAdvisor.class)) {
            runner.withClassLoader(new FilteredClassLoader(hidden))
                    .run(context -> assertThat(context).doesNotHaveBean("rateLimitAdvisor"));
        }
    }

    @Test
    void pricesComeFromThePropertiesAndNoneByDefault() {
        runner.run(context -> {
            assertThat(context.getBean(SpringAiRateLimitProperties.class)
                            .priceTable()
                            .prices())
                    .isEmpty();
            assertThat(context.getBean(RateLimitAdvisor.class).toString()).contains("prices []");
        });
        runner.withPropertyValues(
                        "ratelimit.spring-ai.prices.gpt-4o.input=2.50",
                        "ratelimit.spring-ai.prices.gpt-4o.cached-input=1.25",
                        "ratelimit.spring-ai.prices.gpt-4o.output=10.00",
                        "ratelimit.spring-ai.prices.[claude-sonnet-4-5*].input=3",
                        "ratelimit.spring-ai.prices.[claude-sonnet-4-5*].cached-input=0.30",
                        "ratelimit.spring-ai.prices.[claude-sonnet-4-5*].cache-write=3.75",
                        "ratelimit.spring-ai.prices.[claude-sonnet-4-5*].output=15")
                .run(context -> {
                    PriceTable table =
                            context.getBean(SpringAiRateLimitProperties.class).priceTable();
                    assertThat(table.priceOf("gpt-4o")).isEqualTo(ModelPrice.perMillion("2.50", "1.25", "10.00"));
                    assertThat(table.priceOf("claude-sonnet-4-5-20250929"))
                            .isEqualTo(ModelPrice.perMillion("3", "0.30", "15").withCacheWrite(new BigDecimal("3.75")));
                    assertThat(context.getBean(RateLimitAdvisor.class).toString())
                            .contains("prices [gpt-4o, claude-sonnet-4-5*]");
                });
    }

    @Test
    void aPriceWithoutItsOutputFailsTheStartup() {
        runner.withPropertyValues("ratelimit.spring-ai.prices.gpt-4o.input=2.50")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("ratelimit.spring-ai.prices.gpt-4o.output is required"));
    }

    @Test
    void theApplicationsPriceTableReplacesTheProperties() {
        runner.withPropertyValues(
                        "ratelimit.spring-ai.prices.gpt-4o.input=1", "ratelimit.spring-ai.prices.gpt-4o.output=1")
                .withBean(
                        PriceTable.class,
                        () -> PriceTable.of(Map.of("gpt-4o-mini", ModelPrice.perMillion("1", "1", "1"))))
                .run(context -> assertThat(
                                context.getBean(RateLimitAdvisor.class).toString())
                        .contains("prices [gpt-4o-mini]"));
    }
}
