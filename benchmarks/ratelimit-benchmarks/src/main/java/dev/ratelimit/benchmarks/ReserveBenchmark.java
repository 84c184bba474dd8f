package dev.ratelimit.benchmarks;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Token budgets against today's check, over Lettuce, blocking: {@code check} of a tier of two request
 * windows (minute, day), {@code reserve} of 100 tokens in a tier of requests and tokens per minute and
 * per day, all exact, and the same with the day windows at 1-minute precision. Limits are out of
 * reach; reservations are not settled (one round trip each, as a check).
 */
@State(Scope.Benchmark)
public class ReserveBenchmark extends WorkloadState {

    /** Tokens each reservation estimates. */
    static final long TOKENS = 100;

    static final Window REQUESTS_PER_MINUTE = new Window("rpm", 1_000_000_000L, Duration.ofMinutes(1));
    static final Window REQUESTS_PER_DAY = new Window("rpd", 1_000_000_000L, Duration.ofDays(1));
    static final Window TOKENS_PER_MINUTE = Window.tokens("tpm", 1_000_000_000_000L, Duration.ofMinutes(1));
    static final Window TOKENS_PER_DAY = Window.tokens("tpd", 1_000_000_000_000L, Duration.ofDays(1));

    /** {@code check}, {@code reserve-exact} or {@code reserve-precision}. */
    @Param({"check", "reserve-exact", "reserve-precision"})
    public String variant = "check";

    private @Nullable LettuceStore lettuce;
    private @Nullable RateLimiter limiter;
    private Tier tier = Tier.of("check", REQUESTS_PER_MINUTE, REQUESTS_PER_DAY);
    private boolean reserve;

    /** Empties Redis and builds the limiter, fail-closed. */
    @Setup(Level.Trial)
    public void setUp() {
        BenchRedis.reset();
        contended = Workload.contended(keys); // the tiers are this benchmark's own, not the workload's windows
        Duration minute = Duration.ofMinutes(1);
        switch (variant) {
            case "check" -> tier = Tier.of("check", REQUESTS_PER_MINUTE, REQUESTS_PER_DAY);
            case "reserve-exact" ->
                tier = Tier.of("exact", REQUESTS_PER_MINUTE, REQUESTS_PER_DAY, TOKENS_PER_MINUTE, TOKENS_PER_DAY);
            case "reserve-precision" ->
                tier = Tier.of(
                        "precision",
                        REQUESTS_PER_MINUTE,
                        REQUESTS_PER_DAY.withPrecision(minute),
                        TOKENS_PER_MINUTE,
                        TOKENS_PER_DAY.withPrecision(minute));
            default -> throw new IllegalArgumentException("unknown variant " + variant);
        }
        reserve = !variant.equals("check");
        LettuceStore opened = LettuceStore.open(BenchRedis.uri(), LettuceStore.PATIENT_CONNECT);
        lettuce = opened;
        limiter = opened.failClosedLimiter().name("bench").build();
        limiter.check("warm-up", tier);
    }

    /** Closes the store and client and reports the outcomes. */
    @TearDown(Level.Trial)
    public void tearDown() {
        recordOutcomes("Reserve", 0);
        if (lettuce != null) {
            lettuce.close();
        }
    }

    /**
     * Checks or reserves for the next user and waits for the decision.
     *
     * @return the decision
     */
    @Benchmark
    public Decision blocking() {
        RateLimiter rateLimiter = Objects.requireNonNull(limiter);
        String user = Workload.user(Workload.next(contended));
        Decision decision =
                reserve ? rateLimiter.reserve(user, tier, TOKENS).decision() : rateLimiter.check(user, tier);
        if (!decision.allowed()) {
            rejected.increment();
        }
        return decision;
    }
}
