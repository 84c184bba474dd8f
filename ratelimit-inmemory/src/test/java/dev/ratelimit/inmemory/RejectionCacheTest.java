package dev.ratelimit.inmemory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Reservation;
import dev.ratelimit.api.SharedBudget;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.LimiterMetrics;
import dev.ratelimit.core.LimiterState;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import dev.ratelimit.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The limiter's local rejection cache, over the real in-memory store: exact, bounded, switchable. */
class RejectionCacheTest {

    private final MutableClock clock = MutableClock.at(Instant.parse("2026-01-01T00:00:00Z"));
    private final CountingStore store = new CountingStore(InMemoryWindowStore.create());
    private final Tier free =
            Tier.of("free", Window.of(3, Duration.ofSeconds(10)), Window.of(5, Duration.ofMinutes(1)));

    private RateLimiter limiter(boolean cache) {
        return SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .rejectionCache(cache)
                .build();
    }

    @Test
    @DisplayName("a retry before the retry time is rejected locally with the store's decision, counted down")
    void rejectsLocallyUntilTheRetryTime() {
        RateLimiter limiter = limiter(true);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.check("alice", free).allowed()).isTrue();
            clock.advance(Duration.ofSeconds(1));
        }
        Decision rejected = limiter.check("alice", free);
        assertThat(rejected.allowed()).isFalse();
        assertThat(rejected.retryAfter()).isEqualTo(Duration.ofSeconds(7));
        int calls = store.evaluations.get();

        clock.advance(Duration.ofMillis(2_500));
        Decision cached = limiter.check("alice", free);
        assertThat(store.evaluations.get()).as("no store call").isEqualTo(calls);
        assertThat(cached.allowed()).isFalse();
        assertThat(cached.remaining()).isZero();
        assertThat(cached.window()).isEqualTo(rejected.window());
        assertThat(cached.retryAfter()).isEqualTo(Duration.ofMillis(4_500));
        assertThat(cached.resetAfter()).isEqualTo(Duration.ofMillis(4_500));
        assertThat(limiter.checkAsync("alice", free).toCompletableFuture().join())
                .isEqualTo(cached);
        assertThat(store.evaluations.get()).isEqualTo(calls);

        clock.advance(Duration.ofMillis(4_499));
        assertThat(limiter.check("alice", free).allowed()).isFalse();
        assertThat(store.evaluations.get()).isEqualTo(calls);
        clock.advance(Duration.ofMillis(1));
        assertThat(limiter.check("alice", free).allowed())
                .as("at the retry time the store is asked, and admits")
                .isTrue();
        assertThat(store.evaluations.get()).isEqualTo(calls + 1);
        assertThat(limiter.check("bob", free).allowed())
                .as("other users are not affected")
                .isTrue();
    }

    @Test
    @DisplayName("a cached rejection reports the rejecting window's usage alone: the other windows may have moved")
    void cachedRejectionReportsTheRejectingWindowOnly() {
        RateLimiter limiter = limiter(true);
        Window tenSeconds = Window.of(5, Duration.ofSeconds(10));
        Window minute = Window.of(3, Duration.ofMinutes(1));
        Tier tier = Tier.of("minute-first", tenSeconds, minute);
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.check("carol", tier).allowed()).isTrue();
        }
        Decision rejected = limiter.check("carol", tier);
        assertThat(rejected.window()).isEqualTo(minute);
        assertThat(rejected.usage())
                .as("the store evaluated the shorter window too")
                .extracting(Decision.Usage::window)
                .containsExactly(tenSeconds, minute);
        int calls = store.evaluations.get();
        clock.advance(Duration.ofSeconds(1));
        Decision cached = limiter.check("carol", tier);
        assertThat(store.evaluations.get()).as("no store call").isEqualTo(calls);
        assertThat(cached.usage()).extracting(Decision.Usage::window).containsExactly(minute);
        assertThat(cached.usage().get(0).used()).isEqualTo(3);
        assertThat(cached.usage().get(0).resetAfter()).isEqualTo(Duration.ofSeconds(59));
    }

    @Test
    @DisplayName("with the cache, every decision equals the one a limiter without it gives, over random traffic")
    void sameDecisionsAsWithoutTheCache() {
        MutableClock otherClock = MutableClock.at(clock.instant());
        RateLimiter cached = limiter(true);
        RateLimiter plain = SlidingWindowRateLimiter.builder(InMemoryWindowStore.create())
                .clock(otherClock)
                .rejectionCache(false)
                .build();
        Random random = new Random(42);
        for (int i = 0; i < 20_000; i++) {
            long step = random.nextInt(10) == 0 ? random.nextInt(3_000) : random.nextInt(40);
            clock.advanceMillis(step);
            otherClock.advanceMillis(step);
            String user = "user-" + random.nextInt(3);
            Decision a = cached.check(user, free);
            Decision b = plain.check(user, free);
            assertThat(a.allowed()).as("request %d", i).isEqualTo(b.allowed());
            assertThat(a.retryAfter()).as("request %d", i).isEqualTo(b.retryAfter());
            assertThat(a.window()).as("request %d", i).isEqualTo(b.window());
        }
        assertThat(store.evaluations.get()).as("the cache answered some").isLessThan(20_000);
    }

    @Test
    @DisplayName("32 threads at once on one user: exactly the limit is admitted, the rest rejected, mostly locally")
    void concurrentRunawayClient() throws Exception {
        RateLimiter limiter = limiter(true);
        Tier tight = Tier.of("tight", Window.of(10, Duration.ofMinutes(1)));
        int threads = 32;
        int perThread = 200;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger allowed = new AtomicInteger();
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                start.await();
                for (int i = 0; i < perThread; i++) {
                    if (limiter.check("runaway", tight).allowed()) {
                        allowed.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> future : done) {
            future.get(30, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(allowed.get()).isEqualTo(10);
        assertThat(store.evaluations.get()).as("store calls").isLessThan(threads * perThread / 10);
    }

    @Test
    @DisplayName("rejections by token windows are not cached: commits refund tokens on any instance")
    void tokenWindowsAreNotCached() {
        RateLimiter limiter = limiter(true);
        Tier tokens = Tier.of(
                "tokens", Window.of(100, Duration.ofMinutes(1)), Window.tokens("tpm", 1_000, Duration.ofMinutes(1)));
        assertThat(limiter.reserve("alice", tokens, 900).decision().allowed()).isTrue();
        int calls = store.evaluations.get();
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.reserve("alice", tokens, 200).decision().allowed())
                    .isFalse();
        }
        assertThat(store.evaluations.get()).isEqualTo(calls + 5);
    }

    @Test
    @DisplayName("a cancel through this limiter drops the user's cached rejection at once")
    void cancelDropsTheUsersRejection() {
        RateLimiter limiter = limiter(true);
        Tier one = Tier.of("one", Window.of(1, Duration.ofMinutes(1)));
        Reservation held = limiter.reserve("alice", one, 0);
        assertThat(held.decision().allowed()).isTrue();
        assertThat(limiter.check("alice", one).allowed()).isFalse();
        assertThat(limiter.check("alice", one).allowed()).isFalse();

        held.cancel().toCompletableFuture().join();
        assertThat(limiter.check("alice", one).allowed())
                .as("the refund made room, and the cache knows")
                .isTrue();
    }

    @Test
    @DisplayName("a cancel of a shared budget drops every user's rejection by that budget")
    void cancelOfASharedBudget() {
        RateLimiter limiter = limiter(true);
        Tier user = Tier.of("user", Window.of(100, Duration.ofMinutes(1)));
        List<SharedBudget> upstream = List.of(new SharedBudget("gpt", List.of(Window.of(1, Duration.ofMinutes(1)))));
        Reservation bobs = limiter.reserve("bob", user, 0, upstream);
        assertThat(bobs.decision().allowed()).isTrue();
        Decision alice = limiter.reserve("alice", user, 0, upstream).decision();
        assertThat(alice.allowed()).isFalse();
        assertThat(alice.budget()).isEqualTo("gpt");
        int calls = store.evaluations.get();
        assertThat(limiter.reserve("alice", user, 0, upstream).decision().budget())
                .isEqualTo("gpt");
        assertThat(store.evaluations.get()).as("cached").isEqualTo(calls);

        bobs.cancel().toCompletableFuture().join();
        assertThat(limiter.reserve("alice", user, 0, upstream).decision().allowed())
                .isTrue();
    }

    @Test
    @DisplayName("switched off, every request asks the store")
    void switchedOff() {
        RateLimiter limiter = limiter(false);
        Tier one = Tier.of("one", Window.of(1, Duration.ofMinutes(1)));
        for (int i = 0; i < 5; i++) {
            limiter.check("alice", one);
        }
        assertThat(store.evaluations.get()).isEqualTo(5);
    }

    @Test
    @DisplayName("bounded: a full cache does not take new users until old entries expire")
    void bounded() {
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .rejectionCacheSize(2)
                .build();
        Tier one = Tier.of("one", Window.of(1, Duration.ofSeconds(10)));
        for (String user : List.of("a", "b", "c")) {
            limiter.check(user, one);
            limiter.check(user, one);
        }
        int calls = store.evaluations.get();
        limiter.check("a", one);
        limiter.check("b", one);
        assertThat(store.evaluations.get()).as("a and b cached").isEqualTo(calls);
        limiter.check("c", one);
        assertThat(store.evaluations.get()).as("no room for c").isEqualTo(calls + 1);

        clock.advance(Duration.ofSeconds(10));
        assertThat(limiter.check("c", one).allowed()).isTrue();
        assertThat(limiter.check("c", one).allowed()).isFalse();
        assertThat(limiter.check("c", one).allowed()).isFalse();
        assertThat(store.evaluations.get())
                .as("expired entries made room for c")
                .isEqualTo(calls + 3);
        assertThatThrownBy(() -> SlidingWindowRateLimiter.builder(store).rejectionCacheSize(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maximumSize");
    }

    @Test
    @DisplayName("reported to the limiter's metrics: hits, decisions and size")
    void metered() {
        AtomicInteger cached = new AtomicInteger();
        AtomicInteger decided = new AtomicInteger();
        AtomicReference<LimiterState> state = new AtomicReference<>();
        RateLimiter limiter = SlidingWindowRateLimiter.builder(store)
                .clock(clock)
                .metrics(new LimiterMetrics() {
                    @Override
                    public void bind(LimiterState limiter) {
                        state.set(limiter);
                    }

                    @Override
                    public void recordDecision(String tier, Decision decision, long nanos) {
                        decided.incrementAndGet();
                    }

                    @Override
                    public void recordCachedRejection(String tier, Decision decision) {
                        assertThat(decision.allowed()).isFalse();
                        cached.incrementAndGet();
                    }
                })
                .build();
        Tier one = Tier.of("one", Window.of(1, Duration.ofMinutes(1)));
        for (int i = 0; i < 4; i++) {
            limiter.check("alice", one);
        }
        assertThat(decided).as("the store's allowed and rejected").hasValue(2);
        assertThat(cached).as("the two after the store's rejection").hasValue(2);
        assertThat(state.get().cachesRejections()).isTrue();
        assertThat(state.get().cachedRejections()).isEqualTo(1);
    }

    /** Counts the evaluations that reach the real store. */
    private static final class CountingStore extends ForwardingStore {
        final AtomicInteger evaluations = new AtomicInteger();

        CountingStore(WindowStore delegate) {
            super(delegate);
        }

        @Override
        public Evaluation evaluate(StoreRequest request) {
            evaluations.incrementAndGet();
            return super.evaluate(request);
        }
    }
}
