package dev.ratelimit.spring.boot.ai;

import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The Spring AI integration's settings, under {@code ratelimit.spring-ai}. */
@ConfigurationProperties("ratelimit.spring-ai")
public class SpringAiRateLimitProperties {

    /** Whether every {@code ChatClient} gets the rate-limit advisor. */
    private boolean enabled = true;

    /** The completion tokens reserved for a call whose options name no {@code maxTokens}. */
    private long defaultMaxTokens = 1_024;

    /**
     * Each model's upstream cap, shared by all users, by the model name the calls' options carry
     * (write names with dots in brackets: {@code "[gpt-4.1]"}).
     */
    private Map<String, Model> models = new LinkedHashMap<>();

    /** Creates the settings with their defaults. */
    public SpringAiRateLimitProperties() {}

    /**
     * Returns whether the advisor is on.
     *
     * @return {@code ratelimit.spring-ai.enabled}
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets whether the advisor is on.
     *
     * @param enabled whether it is
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Returns the default completion tokens.
     *
     * @return {@code ratelimit.spring-ai.default-max-tokens}
     */
    public long getDefaultMaxTokens() {
        return defaultMaxTokens;
    }

    /**
     * Sets the default completion tokens.
     *
     * @param defaultMaxTokens the tokens
     */
    public void setDefaultMaxTokens(long defaultMaxTokens) {
        this.defaultMaxTokens = defaultMaxTokens;
    }

    /**
     * Returns the models' caps.
     *
     * @return {@code ratelimit.spring-ai.models}
     */
    public Map<String, Model> getModels() {
        return models;
    }

    /**
     * Sets the models' caps.
     *
     * @param models the caps by model name
     */
    public void setModels(Map<String, Model> models) {
        this.models = models;
    }

    /**
     * Returns each capped model's shared budget, named {@code spring-ai/<model>}.
     *
     * @return the budgets by model name; models without any limit are left out
     */
    public Map<String, SharedBudget> modelBudgets() {
        Map<String, SharedBudget> budgets = new LinkedHashMap<>();
        models.forEach((name, model) -> {
            List<Window> windows = model.windows();
            if (!windows.isEmpty()) {
                budgets.put(name, new SharedBudget("spring-ai/" + name, windows));
            }
        });
        return budgets;
    }

    /** One model's upstream cap: what the provider allows the application's key per minute. */
    public static class Model {

        /** Tokens per minute, all users together. */
        private @Nullable Long tpm;

        /** Requests per minute, all users together. */
        private @Nullable Long rpm;

        /** Creates a cap without limits. */
        public Model() {}

        /**
         * Returns the tokens per minute.
         *
         * @return the limit, or {@code null} for none
         */
        public @Nullable Long getTpm() {
            return tpm;
        }

        /**
         * Sets the tokens per minute.
         *
         * @param tpm the limit
         */
        public void setTpm(@Nullable Long tpm) {
            this.tpm = tpm;
        }

        /**
         * Returns the requests per minute.
         *
         * @return the limit, or {@code null} for none
         */
        public @Nullable Long getRpm() {
            return rpm;
        }

        /**
         * Sets the requests per minute.
         *
         * @param rpm the limit
         */
        public void setRpm(@Nullable Long rpm) {
            this.rpm = rpm;
        }

        List<Window> windows() {
            List<Window> windows = new ArrayList<>();
            Long requests = rpm;
            if (requests != null) {
                windows.add(new Window("rpm", requests, Duration.ofMinutes(1)));
            }
            Long tokens = tpm;
            if (tokens != null) {
                windows.add(Window.tokens("tpm", tokens, Duration.ofMinutes(1)));
            }
            return windows;
        }
    }
}
