package dev.ratelimit.core;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.RateLimiterUnavailableException;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs a limiter's paths without a meter registry: checks, a reservation and its commit, and a store
 * that fails (open, then closed). {@link MicrometerOptionalTest} runs it in a class loader that has no
 * Micrometer; it names what each step answered.
 */
public final class WithoutMicrometer implements Callable<List<String>> {

    @Override
    public List<String> call() {
        List<String> answers = new ArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        WindowStore store = Stores.answering(request -> calls.incrementAndGet() <= 2
                ? Evaluation.allowed(0, new long[] {calls.get()}, new long[] {60_000})
                : Evaluation.rejected(0, 0, 1_000, new long[] {2}, new long[] {60_000}));
        Tier tier = Tier.of("t", Window.of(2, Duration.ofMinutes(1)));
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store).build();
        answers.add("check " + limiter.check("u", tier).allowed());
        Reservation reservation = limiter.reserve("u", tier, 0, List.of());
        answers.add("reserve " + reservation.decision().allowed());
        reservation.commit(0).toCompletableFuture().join();
        answers.add("check " + limiter.check("u", tier).allowed());
        WindowStore down = Stores.answering(request -> {
            throw new RateLimiterUnavailableException("down");
        });
        Decision open = SlidingWindowRateLimiter.builder(down).build().check("u", tier);
        answers.add("fail open " + open.allowed() + " degraded " + open.degraded());
        try {
            SlidingWindowRateLimiter.builder(down).failOpen(false).build().check("u", tier);
            answers.add("fail closed allowed");
        } catch (RateLimiterUnavailableException e) {
            answers.add("fail closed refused");
        }
        return answers;
    }
}
