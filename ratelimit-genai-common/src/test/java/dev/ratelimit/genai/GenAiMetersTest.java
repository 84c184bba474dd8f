package dev.ratelimit.genai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** OpenTelemetry's GenAI client metrics, recorded by calls admitted through a catalog given a registry. */
class GenAiMetersTest {

    private static final Tier TIER =
            Tier.of("t", Window.of(100, Duration.ofMinutes(1)), Window.tokens(100_000, Duration.ofMinutes(1)));

    private final RateLimiter limiter =
            SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ModelCatalog catalog =
            new TestBuilder().meterRegistry(registry).build();

    private static final class TestBuilder extends ModelCatalog.Builder<TestBuilder> {
        ModelCatalog build() {
            return catalog();
        }
    }

    private ModelCall admit(String model) {
        return catalog.admit(limiter, "u", TIER, catalog.request(model, "?", TokenCounts.forModel(model), 10, 100));
    }

    private DistributionSummary tokens(String model, String type) {
        return registry.get(GenAiMeters.TOKEN_USAGE)
                .tag("gen_ai.request.model", model)
                .tag("gen_ai.token.type", type)
                .summary();
    }

    @Test
    @DisplayName("a completed call records its input and output tokens and its duration, tagged by the conventions")
    void completed() {
        admit("gpt-4o")
                .complete(new TokenUsage(30, 20, 0, 12))
                .toCompletableFuture()
                .join();
        admit("gpt-4o").complete(TokenUsage.of(5, 7)).toCompletableFuture().join();

        DistributionSummary input = tokens("gpt-4o", "input");
        assertThat(input.count()).isEqualTo(2);
        assertThat(input.totalAmount()).as("cached input is input").isEqualTo(30 + 20 + 5);
        assertThat(input.getId().getTag("gen_ai.provider.name")).isEqualTo("openai");
        assertThat(input.getId().getTag("gen_ai.operation.name")).isEqualTo("chat");
        assertThat(tokens("gpt-4o", "output").totalAmount()).isEqualTo(12 + 7);
        Timer duration = registry.get(GenAiMeters.DURATION)
                .tag("gen_ai.request.model", "gpt-4o")
                .timer();
        assertThat(duration.count()).isEqualTo(2);
        assertThat(duration.getId().getTag("error.type")).isNull();
        assertThat(Arrays.stream(input.takeSnapshot().histogramCounts())
                        .mapToDouble(CountAtBucket::bucket)
                        .toArray())
                .as("OpenTelemetry's advised boundaries")
                .startsWith(1, 4, 16, 64)
                .contains(67_108_864);
    }

    @Test
    @DisplayName(
            "a failed call records error.type with its exception's class; a cancelled one 'cancelled'; a second settlement nothing")
    void failed() {
        ModelCall failed = admit("claude-sonnet-4-5");
        failed.cancel(new IllegalStateException("529 overloaded"))
                .toCompletableFuture()
                .join();
        failed.complete(TokenUsage.of(1, 1)).toCompletableFuture().join();
        admit("gemini-2.5-flash")
                .produced(40, new IOException("reset"))
                .toCompletableFuture()
                .join();
        admit("gemini-2.5-flash").produced(3).toCompletableFuture().join();

        Timer anthropic = registry.get(GenAiMeters.DURATION)
                .tag("gen_ai.provider.name", "anthropic")
                .timer();
        assertThat(anthropic.count()).isEqualTo(1);
        assertThat(anthropic.getId().getTag("error.type")).isEqualTo(IllegalStateException.class.getName());
        assertThat(registry.find(GenAiMeters.TOKEN_USAGE)
                        .tag("gen_ai.request.model", "claude-sonnet-4-5")
                        .summaries())
                .as("a cancelled call used no tokens")
                .isEmpty();
        assertThat(registry.get(GenAiMeters.DURATION)
                        .tag("gen_ai.provider.name", "gcp.gemini")
                        .tag("error.type", IOException.class.getName())
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(GenAiMeters.DURATION)
                        .tag("error.type", "cancelled")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(tokens("gemini-2.5-flash", "output").totalAmount()).isEqualTo(40 + 3);
        assertThatThrownBy(() -> admit("gpt-4o").cancel((Throwable) null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    @DisplayName("the provider comes from the model's name")
    void providers() {
        assertThat(GenAiMeters.provider("openai/gpt-4o-mini")).isEqualTo("openai");
        assertThat(GenAiMeters.provider("o3-mini")).isEqualTo("openai");
        assertThat(GenAiMeters.provider("text-embedding-3-small")).isEqualTo("openai");
        assertThat(GenAiMeters.provider("Claude-3-5-haiku")).isEqualTo("anthropic");
        assertThat(GenAiMeters.provider("gemma-3-27b-it")).isEqualTo("gcp.gemini");
        assertThat(GenAiMeters.provider("llama-3.1-70b")).isEqualTo("_OTHER");
    }

    @Test
    @DisplayName("calls admitted without a registry record nothing, and run with no Micrometer class at all")
    void withoutMicrometer() throws Exception {
        ModelCall.admit(limiter, "u", TIER, catalog.request("gpt-4o", "?", TokenCounts.forModel("gpt-4o"), 1, 1))
                .complete(TokenUsage.of(1, 1))
                .toCompletableFuture()
                .join();
        assertThat(registry.getMeters()).isEmpty();

        try (NoMicrometer loader = new NoMicrometer()) {
            @SuppressWarnings("unchecked")
            Callable<String> probe = (Callable<String>)
                    loader.loadClass(Probe.class.getName()).getConstructor().newInstance();
            assertThat(probe.call()).isEqualTo("settled 2 tokens");
            assertThat(loader.refused)
                    .as("the probe's classes asked for Micrometer")
                    .isFalse();
        }
    }

    /** Admits and settles a call through a catalog built without a registry. */
    public static final class Probe implements Callable<String> {
        @Override
        public String call() {
            RateLimiter limiter = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                    .build();
            ModelCatalog catalog = new TestBuilder().build();
            // its own tier: the test class's fields would load it, and it holds a Micrometer registry
            Tier tier = Tier.of("t", Window.tokens(100, Duration.ofMinutes(1)));
            catalog.admit(limiter, "u", tier, catalog.request("gpt-4o", "?", TokenCounts.forModel("gpt-4o"), 1, 1))
                    .complete(TokenUsage.of(1, 1))
                    .toCompletableFuture()
                    .join();
            return "settled " + limiter.usage("u", tier).get(0).used() + " tokens";
        }
    }

    /**
     * Defines this project's classes itself (so they link against what it offers) and refuses every
     * Micrometer class; everything else comes from the test's class loader.
     */
    private static final class NoMicrometer extends ClassLoader implements AutoCloseable {

        volatile boolean refused;

        NoMicrometer() {
            super(GenAiMetersTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (name.startsWith("io.micrometer.")) {
                    refused = true;
                    throw new ClassNotFoundException(name);
                }
                if (!name.startsWith("dev.ratelimit.")) {
                    return super.loadClass(name, resolve);
                }
                Class<?> loaded = findLoadedClass(name);
                if (loaded == null) {
                    try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        if (in == null) {
                            throw new ClassNotFoundException(name);
                        }
                        byte[] bytes = in.readAllBytes();
                        loaded = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return loaded;
            }
        }

        @Override
        public void close() {}
    }
}
