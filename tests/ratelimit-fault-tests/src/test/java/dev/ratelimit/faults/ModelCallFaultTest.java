package dev.ratelimit.faults;

import static dev.ratelimit.faults.SettlementFaultTest.race;
import static dev.ratelimit.faults.SettlementFaultTest.used;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.api.Amounts;
import dev.ratelimit.api.Concurrency;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.CloseableWindowStore;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.genai.ModelCall;
import dev.ratelimit.genai.ModelPrice;
import dev.ratelimit.genai.TokenCounts;
import dev.ratelimit.genai.TokenUsage;
import dev.ratelimit.micrometer.MicrometerLimiterMetrics;
import dev.ratelimit.testsupport.redis.RedisServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The metered-call engine ({@link ModelCall}: what the gateway, Spring AI and LangChain4j settle
 * through) on a private redis-server, for both drivers, with Redis paused, killed and restarted, and
 * cold under load: every call is settled exactly once however many settlements race for it (exactly
 * one reports {@code true}), no settlement is lost, a call reserved while the store cannot decide is
 * refused (money fails closed) and leaves nothing behind, and afterwards Redis holds exactly what the
 * applied settlements charged, tokens and micro-dollars, at every level.
 */
class ModelCallFaultTest {

    private static final int CALLS = 24;
    /** Settlements racing for each call: commits with different usages and cancels, released at once. */
    private static final int RACERS = 4;

    private static final ModelPrice PRICE = ModelPrice.perMillion("2.50", "1.25", "10");

    /** Redis persisting every write before it answers, as a production Redis that must not lose money. */
    private static final List<String> PERSISTENT = List.of("--appendonly", "yes", "--appendfsync", "always");

    enum Fault {
        /** {@code CLIENT PAUSE 1500 ALL}: every call waits, the limiter stops waiting after 500 ms. */
        PAUSED,
        /** {@code SIGKILL}, down for a second, started again on its append-only file. */
        KILLED_AND_RESTARTED,
        /** No fault while settling: a new limiter on a new Redis (no script loaded) under a race. */
        COLD_START
    }

    @ParameterizedTest(name = "{0} {1}")
    @DisplayName("racing settlements of 24 calls across a fault: each applied once, Redis holds what they charged")
    @MethodSource("cases")
    void settledExactlyOnceAcrossAFault(Driver driver, Fault fault) throws Exception {
        String run = UUID.randomUUID().toString();
        SharedBudget team = SharedBudget.of("team-" + run, Window.tokens("team-tph", 10_000_000, Duration.ofHours(1)));
        SharedBudget org = SharedBudget.of(
                "org-" + run,
                Window.of("org-month", 1_000_000_000, Duration.ofDays(30), Window.Unit.USD_MICROS)
                        .withPrecision(Duration.ofHours(1)));
        Tier tier = Tier.of(
                "tenant",
                Window.tokens("tpm", 10_000_000, Duration.ofMinutes(1)),
                Window.of("spend-day", 1_000_000_000, Duration.ofDays(1), Window.Unit.USD_MICROS));
        String user = "user-" + run;
        ModelCall.Request request = new ModelCall.Request(
                "gpt-4o", null, PRICE, TokenCounts.forModel("gpt-4o"), 100, 400, List.of(team, org));

        try (RedisServer redis = RedisServer.start(PERSISTENT);
                CloseableWindowStore store = driver.standalone(redis)) {
            MeterRegistry registry = new SimpleMeterRegistry();
            RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                    .metrics(MicrometerLimiterMetrics.of(registry))
                    .build();

            List<ModelCall> calls;
            if (fault == Fault.COLD_START) {
                calls = race(CALLS, i -> reserve(limiter, user, tier, request));
            } else {
                calls = new ArrayList<>();
                for (int i = 0; i < CALLS; i++) {
                    calls.add(reserve(limiter, user, tier, request));
                }
            }
            assertThat(calls).as("admitted before the fault").allMatch(ModelCall::allowed);

            long faultStarted = System.nanoTime();
            switch (fault) {
                case PAUSED -> redis.call("CLIENT", "PAUSE", "1500", "ALL");
                case KILLED_AND_RESTARTED -> redis.kill();
                case COLD_START -> {}
            }
            // racer r of call c: even racers commit (usage differs per racer), odd racers cancel
            List<Boolean> applied = race(CALLS * RACERS, i -> {
                ModelCall call = calls.get(i / RACERS);
                int racer = i % RACERS;
                return (racer % 2 == 0
                                ? call.commit(
                                        TokenUsage.of(100, 10 + 10 * racer + i / RACERS), ModelCall.Ending.COMPLETED)
                                : call.cancel(ModelCall.Ending.CANCELLED))
                        .toCompletableFuture()
                        .get(30, TimeUnit.SECONDS);
            });
            // calls made while the store cannot decide: refused (a budget in money fails closed)
            List<Boolean> admittedDuringFault = fault == Fault.COLD_START
                    ? List.of()
                    : race(8, i -> {
                        try {
                            return reserve(limiter, user, tier, request).allowed();
                        } catch (CompletionException e) {
                            assertThat(e.getCause()).isInstanceOf(RateLimiterUnavailableException.class);
                            return false;
                        }
                    });
            boolean duringFault = System.nanoTime() - faultStarted < TimeUnit.MILLISECONDS.toNanos(1_500);
            if (fault == Fault.KILLED_AND_RESTARTED) {
                Thread.sleep(Math.max(0, 1_000 - (System.nanoTime() - faultStarted) / 1_000_000));
                redis.startAgain();
            } else if (fault == Fault.PAUSED) {
                // the pause over, whatever Redis ran late (the refused reservations) has run
                Thread.sleep(Math.max(0, 1_600 - (System.nanoTime() - faultStarted) / 1_000_000));
            }
            assertThat(limiter.awaitSettlements(Duration.ofSeconds(30)))
                    .as("every settlement and cancel in doubt applied once Redis answers")
                    .isTrue();

            long tokens = 0;
            long micros = 0;
            for (int c = 0; c < CALLS; c++) {
                ModelCall call = calls.get(c);
                assertThat(applied.subList(c * RACERS, (c + 1) * RACERS).stream()
                                .filter(Boolean::booleanValue)
                                .count())
                        .as("settlements of call %d that report they were applied", c)
                        .isEqualTo(1);
                assertThat(call.settled()).isTrue();
                Amounts charged = call.charged();
                assertThat(charged).isNotNull();
                tokens += charged.get(Window.Unit.TOKENS);
                micros += charged.get(Window.Unit.USD_MICROS);
            }
            System.out.printf(
                    "%s %s: %d calls, %d racing settlements, %d applied; charged %d tokens, %d µ$; %d calls refused"
                            + " during the fault (%s); Redis: team %d tokens, org %d µ$, user %d tokens, %d µ$%n",
                    driver,
                    fault,
                    CALLS,
                    applied.size(),
                    applied.stream().filter(Boolean::booleanValue).count(),
                    tokens,
                    micros,
                    admittedDuringFault.stream().filter(a -> !a).count(),
                    fault == Fault.COLD_START ? "no fault" : duringFault ? "all within it" : "some after it",
                    used(limiter.usage(team), "team-tph"),
                    used(limiter.usage(org), "org-month"),
                    used(limiter.usage(user, tier), "tpm"),
                    used(limiter.usage(user, tier), "spend-day"));
            assertThat(admittedDuringFault)
                    .as("nothing admitted while the store cannot decide")
                    .doesNotContain(true);
            assertThat(used(limiter.usage(team), "team-tph"))
                    .as("the team's tokens")
                    .isEqualTo(tokens);
            assertThat(used(limiter.usage(org), "org-month"))
                    .as("the org's spend")
                    .isEqualTo(micros);
            assertThat(used(limiter.usage(user, tier), "tpm"))
                    .as("the user's tokens")
                    .isEqualTo(tokens);
            assertThat(used(limiter.usage(user, tier), "spend-day"))
                    .as("the user's spend")
                    .isEqualTo(micros);
            assertThat(limiter.inFlight(user)).as("no concurrency slot left").isZero();
            assertThat(registry.find("ratelimit.settle.failures").counters())
                    .as("no settlement given up")
                    .isEmpty();
            if (fault != Fault.COLD_START) {
                assertThat(registry.find("ratelimit.settle.deferred").counters())
                        .as("settlements made during the fault waited for the store")
                        .isNotEmpty();
            }
        }
    }

    static List<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (Driver driver : Driver.values()) {
            for (Fault fault : Fault.values()) {
                cases.add(Arguments.of(driver, fault));
            }
        }
        return cases;
    }

    private static ModelCall reserve(RateLimiter limiter, String user, Tier tier, ModelCall.Request request) {
        return ModelCall.reserveAsync(limiter, user, tier, request, Concurrency.of(1_000))
                .toCompletableFuture()
                .join();
    }
}
