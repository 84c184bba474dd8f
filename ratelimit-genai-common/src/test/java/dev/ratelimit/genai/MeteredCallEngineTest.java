package dev.ratelimit.genai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.inmemory.InMemoryWindowStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The metered-call engine as the gateway uses it: a call charged to the user and any number of
 * levels with a concurrency slot in one reservation, refused as a value, restored from a receipt,
 * settled once.
 */
class MeteredCallEngineTest {

    private static final Tier TIER = Tier.of("t", Window.tokens(10_000, Duration.ofMinutes(1)));
    private static final SharedBudget TEAM =
            SharedBudget.of("team:research", Window.tokens("team-tpm", 1_000, Duration.ofMinutes(1)));
    private static final SharedBudget ORG =
            SharedBudget.of("org:acme", Window.of("org-spend", 1_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS));
    private static final ModelPrice PRICE = ModelPrice.perMillion("2.50", "1.25", "10");

    private final RateLimiter limiter =
            SlidingWindowRateLimiter.builder(InMemoryWindowStore.create()).build();

    private static ModelCall.Request request(long prompt, long output) {
        return new ModelCall.Request(
                "gpt-4o", null, PRICE, TokenCounts.forModel("gpt-4o"), prompt, output, List.of(TEAM, ORG));
    }

    private long used(SharedBudget budget) {
        return limiter.usage(budget).get(0).used();
    }

    @Test
    @DisplayName("one reservation charges the user and every level, and settles all of them to the usage")
    void chargesEveryLevel() {
        ModelCall call = ModelCall.reserveAsync(limiter, "u", TIER, request(100, 400), null)
                .toCompletableFuture()
                .join();
        assertThat(call.allowed()).isTrue();
        assertThat(used(TEAM)).isEqualTo(500);
        assertThat(used(ORG)).isEqualTo(request(100, 400).amounts().get(Window.Unit.USD_MICROS));

        call.complete(TokenUsage.of(100, 50)).toCompletableFuture().join();
        assertThat(used(TEAM)).isEqualTo(150);
        assertThat(used(ORG)).isEqualTo(PRICE.costMicros(TokenUsage.of(100, 50)));
    }

    @Test
    @DisplayName("a level's refusal is a value naming that level, and nothing is charged anywhere")
    void refusalIsAValue() {
        ModelCall call = ModelCall.reserveAsync(limiter, "u", TIER, request(800, 400), null)
                .toCompletableFuture()
                .join();
        assertThat(call.allowed()).isFalse();
        assertThat(call.decision().budget()).isEqualTo("team:research");
        assertThat(call.receipt()).isEmpty();
        call.complete(TokenUsage.of(800, 400)).toCompletableFuture().join(); // does nothing
        assertThat(used(TEAM)).isZero();
        assertThat(used(ORG)).isZero();
        assertThat(limiter.usage("u", TIER).get(0).used()).isZero();
    }

    @Test
    @DisplayName("the concurrency slot is taken in the same reservation and refuses as a value")
    void concurrencyInTheSameCall() {
        Concurrency one = Concurrency.of(1);
        ModelCall first = ModelCall.reserveAsync(limiter, "u", TIER, request(10, 10), one)
                .toCompletableFuture()
                .join();
        ModelCall second = ModelCall.reserveAsync(limiter, "u", TIER, request(10, 10), one)
                .toCompletableFuture()
                .join();
        assertThat(first.allowed()).isTrue();
        assertThat(second.allowed()).isFalse();
        assertThat(second.concurrencyLimited()).isTrue();
        assertThat(used(TEAM)).as("the refused call charged nothing").isEqualTo(20);
        first.cancel().toCompletableFuture().join();
        assertThat(ModelCall.reserveAsync(limiter, "u", TIER, request(10, 10), one)
                        .toCompletableFuture()
                        .join()
                        .allowed())
                .as("the slot is free once the first call is settled")
                .isTrue();
    }

    @Test
    @DisplayName("a call restored from its receipt settles the original reservation, once")
    void restoredFromItsReceipt() {
        ModelCall call = ModelCall.reserveAsync(limiter, "u", TIER, request(100, 400), null)
                .toCompletableFuture()
                .join();
        String receipt = call.receipt().orElseThrow();
        ModelCall restored = ModelCall.restore(limiter, request(100, 400), receipt);
        restored.complete(TokenUsage.of(100, 100)).toCompletableFuture().join();
        restored.complete(TokenUsage.of(100, 300)).toCompletableFuture().join(); // a second does nothing
        assertThat(used(TEAM)).isEqualTo(200);
    }

    @Test
    @DisplayName("racing settlements of one call: exactly one is applied")
    void settledExactlyOnceUnderARace() throws Exception {
        ModelCall call = ModelCall.reserveAsync(limiter, "u", TIER, request(100, 400), null)
                .toCompletableFuture()
                .join();
        int threads = 16;
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger index = new AtomicInteger();
        AtomicInteger applied = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                done.add(pool.submit(() -> {
                    start.await();
                    int n = index.getAndIncrement();
                    boolean first = n % 2 == 0
                            ? call.commit(TokenUsage.of(100, 1 + n), ModelCall.Ending.COMPLETED)
                                    .toCompletableFuture()
                                    .join()
                            : call.cancel(ModelCall.Ending.CANCELLED)
                                    .toCompletableFuture()
                                    .join();
                    if (first) {
                        applied.incrementAndGet();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> future : done) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(applied).as("settlements that report they were applied").hasValue(1);
        long team = used(TEAM);
        ModelCall.Ending ending = call.ending();
        assertThat(ending).isNotNull();
        assertThat(team)
                .as("the one applied settlement is the one the call reports")
                .isEqualTo(call.charged().get(Window.Unit.TOKENS));
        assertThat(ending.completed() ? team >= 101 && team <= 116 : team == 0).isTrue();
    }

    @Test
    @DisplayName("a settlement reports what it charged and how the call ended; a later one does nothing")
    void reportsItsSettlement() {
        ModelCall call = ModelCall.reserveAsync(limiter, "u", TIER, request(100, 400), null)
                .toCompletableFuture()
                .join();
        assertThat(call.settled()).isFalse();
        assertThat(call.ending()).isNull();
        assertThat(call.charged()).isNull();

        ModelCall.Ending broken = new ModelCall.Ending("stream_broken", false);
        assertThat(call.commit(TokenUsage.of(100, 20), broken)
                        .toCompletableFuture()
                        .join())
                .isTrue();
        assertThat(call.settled()).isTrue();
        assertThat(call.ending()).isEqualTo(broken);
        assertThat(call.charged()).isEqualTo(request(100, 400).actual(TokenUsage.of(100, 20)));
        assertThat(call.cancel(ModelCall.Ending.CANCELLED).toCompletableFuture().join())
                .isFalse();
        assertThat(used(TEAM)).isEqualTo(120);

        ModelCall refused = ModelCall.reserveAsync(limiter, "u", TIER, request(2_000, 0), null)
                .toCompletableFuture()
                .join();
        assertThat(refused.settled())
                .as("a refused call holds nothing to settle")
                .isTrue();
        assertThat(refused.commit(TokenUsage.of(1, 1), ModelCall.Ending.COMPLETED)
                        .toCompletableFuture()
                        .join())
                .isFalse();
        assertThat(refused.charged()).isNull();
    }

    @Test
    @DisplayName("the engine records GenAI client metrics for the provider's operation, and none for a held call")
    void recordsGenAiMetrics() {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        CallMeters meters = GenAiMeters.of(registry).calls("openai", "text_completion");
        ModelCall call = ModelCall.reserveAsync(limiter, "u", TIER, request(100, 400), null, meters)
                .toCompletableFuture()
                .join();
        call.commit(TokenUsage.of(100, 20), new ModelCall.Ending("client_disconnected", false))
                .toCompletableFuture()
                .join();
        assertThat(registry.get(GenAiMeters.DURATION)
                        .tag("gen_ai.provider.name", "openai")
                        .tag("gen_ai.operation.name", "text_completion")
                        .tag("gen_ai.request.model", "gpt-4o")
                        .tag("error.type", "client_disconnected")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get(GenAiMeters.TOKEN_USAGE)
                        .tag("gen_ai.token.type", "output")
                        .summary()
                        .totalAmount())
                .isEqualTo(20);

        ModelCall held = ModelCall.reserveAsync(limiter, "u", TIER, request(10, 10), null, meters)
                .toCompletableFuture()
                .join();
        held.hold();
        held.commit(TokenUsage.of(10, 10), ModelCall.Ending.COMPLETED)
                .toCompletableFuture()
                .join();
        assertThat(registry.get(GenAiMeters.DURATION).timers())
                .as("a held call's settlement records nothing")
                .hasSize(1);
    }
}
