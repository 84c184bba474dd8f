package dev.ratelimit.testkit;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.WindowStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;

/**
 * What every section of the kit sees: the running {@link WindowStoreConformanceKit} (its store,
 * limiter, clock and declared capabilities) and the helpers the rules share. A section is an
 * interface of default {@code @Test} methods that the kit composes as a {@code @Nested} class.
 */
interface ConformanceSection {

    /** The instant the injected clock starts at. */
    Instant START = WindowStoreConformanceKit.START;

    Duration MINUTE = Duration.ofMinutes(1);
    Duration HOUR = Duration.ofHours(1);
    Duration DAY = Duration.ofDays(1);

    /**
     * Returns the kit instance running the current test.
     *
     * @return the kit
     */
    WindowStoreConformanceKit kit();

    /**
     * Returns the store under test, created for the current test.
     *
     * @return the store
     */
    default WindowStore store() {
        return kit().store;
    }

    /**
     * Returns the limiter over the store, on the injected clock, failing closed.
     *
     * @return the limiter
     */
    default RateLimiter limiter() {
        return kit().limiter;
    }

    /**
     * Returns the clock injected into {@link #limiter()}.
     *
     * @return the clock
     */
    default MutableClock clock() {
        return kit().clock;
    }

    /**
     * Returns a user id unique to the running test.
     *
     * @param name a readable suffix
     * @return the user id
     */
    default String user(String name) {
        return kit().user(name);
    }

    /**
     * Makes {@code attempts} checks of one window in turn and counts the allowed ones.
     *
     * @param attempts how many checks
     * @param user the user
     * @param limit the window's limit
     * @param length the window's length
     * @return the number allowed
     */
    default int allowedOf(int attempts, String user, int limit, Duration length) {
        int allowed = 0;
        for (int i = 0; i < attempts; i++) {
            if (limiter().check(user, limit, length).allowed()) {
                allowed++;
            }
        }
        return allowed;
    }

    /**
     * Releases {@code threads} threads at once, each making one check, and counts the allowed ones.
     *
     * @param threads how many threads race
     * @param check one thread's check, given its index; {@code true} when allowed
     * @return the number allowed
     * @throws Exception if a check fails or the race does not finish within a minute
     */
    default int allowedOfRace(int threads, IntPredicate check) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch ready = new CountDownLatch(threads);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                int thread = i;
                results.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return check.test(thread);
                }));
            }
            if (!ready.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(threads + " threads did not all start within 30 s");
            }
            go.countDown();
            int allowed = 0;
            for (Future<Boolean> result : results) {
                if (result.get(60, TimeUnit.SECONDS)) {
                    allowed++;
                }
            }
            return allowed;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Returns what a decision reports as used in one window.
     *
     * @param decision the decision
     * @param window the window
     * @param budget {@code null} for the user's own window, else the shared budget's name
     * @return the window's used count
     * @throws AssertionError if the decision does not report that window
     */
    default long used(Decision decision, Window window, @Nullable String budget) {
        return decision.usage().stream()
                .filter(usage -> usage.window().equals(window) && Objects.equals(usage.budget(), budget))
                .findFirst()
                .orElseThrow(
                        () -> new AssertionError("no usage of " + window + " (budget " + budget + ") in " + decision))
                .used();
    }

    /**
     * Waits for a settlement to be applied.
     *
     * @param stage the stage {@code commit} or {@code cancel} returned
     */
    default void settled(CompletionStage<Void> stage) {
        stage.toCompletableFuture().join();
    }
}
