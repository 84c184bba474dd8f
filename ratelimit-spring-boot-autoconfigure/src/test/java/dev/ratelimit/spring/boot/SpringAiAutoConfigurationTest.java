package dev.ratelimit.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spring.boot.ai.SpringAiRateLimitAutoConfiguration;
import dev.ratelimit.spring.boot.ai.SpringAiRateLimitProperties;
import dev.ratelimit.springai.EndUserResolver;
import dev.ratelimit.springai.RateLimitAdvisor;
import java.util.List;
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
}
