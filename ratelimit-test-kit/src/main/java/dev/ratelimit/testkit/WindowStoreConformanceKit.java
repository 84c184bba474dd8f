package dev.ratelimit.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.api.Decision;
import dev.ratelimit.api.RateLimiter;
import dev.ratelimit.api.Tier;
import dev.ratelimit.api.Window;
import dev.ratelimit.core.Evaluation;
import dev.ratelimit.core.SlidingWindowRateLimiter;
import dev.ratelimit.core.StoreRequest;
import dev.ratelimit.core.WindowStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The conformance kit: the executable contract of {@link WindowStore}, run through {@link
 * SlidingWindowRateLimiter}. Every store, ours and third parties', passes it by extending this
 * class:
 *
 * <pre>{@code
 * class MyStoreConformanceTest extends WindowStoreConformanceKit {
 *     @Override
 *     protected WindowStore createStore() {
 *         return MyStore.create(...);
 *     }
 * }
 * }</pre>
 *
 * <p>Rules are grouped by section in {@link Nested} classes; each display name starts with the
 * rule id documented in {@code CONFORMANCE.md}. Time moves through a {@link MutableClock} injected
 * into the limiter, so no test sleeps except where real expiry is the point (and then only when the
 * store declares {@link #supportsRealExpiry()}). Every test uses user ids unique to it, so one
 * server can serve the whole run without being flushed.
 */
public abstract class WindowStoreConformanceKit {

    /** The instant the injected clock starts at; a whole minute, so fixed windows would align. */
    protected static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    private static final Duration MINUTE = Duration.ofMinutes(1);
    private static final Duration HOUR = Duration.ofHours(1);
    private static final Duration DAY = Duration.ofDays(1);

    /** The store under test, created before each test. */
    protected WindowStore store;

    /** The store wrapped to count calls. */
    protected CountingStore counting;

    /** The clock injected into {@link #limiter}. */
    protected MutableClock clock;

    /** A limiter over {@link #store} on {@link #clock}, failing closed so store errors surface. */
    protected RateLimiter limiter;

    private String prefix;

    /**
     * Creates the store under test; called before every test.
     *
     * @return a store, connected to whatever backend it needs
     */
    protected abstract WindowStore createStore();

    /**
     * Releases a store after a test; the default closes it when it is {@link AutoCloseable}.
     *
     * @param store the store created for the test
     * @throws Exception if closing fails
     */
    protected void close(WindowStore store) throws Exception {
        if (store instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }

    /**
     * Declares that the store drops an idle user's state after its longest window plus one second
     * of real time; rules of section E then run and call {@link #holdsStateFor}.
     *
     * @return {@code true} when the store expires idle state in real time
     */
    protected boolean supportsRealExpiry() {
        return false;
    }

    /**
     * Tells whether the store still holds state for a user's window; used only when {@link
     * #supportsRealExpiry()} is {@code true}.
     *
     * @param store the store
     * @param userId the user
     * @param window the window length
     * @return {@code true} while the store retains that state
     */
    protected boolean holdsStateFor(WindowStore store, String userId, Duration window) {
        throw new UnsupportedOperationException("override holdsStateFor when supportsRealExpiry() is true");
    }

    /**
     * Declares that the store evaluates requests of several scopes (a user's windows plus budgets
     * shared by many users) in one atomic step; rules of section G then run. A store that cannot
     * must refuse such requests with {@link UnsupportedOperationException}, which rule G0 checks.
     *
     * @return {@code true} when the store supports several scopes per request
     */
    protected boolean supportsSharedScopes() {
        return false;
    }

    /**
     * Returns the number of concurrent trials the concurrency rules repeat; lower it only for very
     * slow backends.
     *
     * @return the number of trials, at least 1
     */
    protected int concurrencyTrials() {
        return 5;
    }

    @BeforeEach
    void createLimiter() {
        store = createStore();
        counting = new CountingStore(store);
        clock = MutableClock.at(START);
        limiter = limiterFor(counting, false);
        prefix = "kit-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    }

    @AfterEach
    void closeStore() throws Exception {
        close(store);
    }

    /**
     * Returns a user id unique to the running test.
     *
     * @param name a readable suffix
     * @return the user id
     */
    protected String user(String name) {
        return prefix + name;
    }

    private RateLimiter limiterFor(WindowStore target, boolean disabled) {
        return SlidingWindowRateLimiter.builder(target)
                .clock(clock)
                .failOpen(false)
                .disabled(disabled)
                .build();
    }

    private static Window window(String name, int limit, Duration length) {
        return new Window(name, limit, length);
    }

    private int allowedOf(int attempts, String user, int limit, Duration length) {
        int allowed = 0;
        for (int i = 0; i < attempts; i++) {
            if (limiter.check(user, limit, length).allowed()) {
                allowed++;
            }
        }
        return allowed;
    }

    /** Section B: the basic contract of one window. */
    @Nested
    @DisplayName("B: basics")
    class Basics {

        @Test
        @DisplayName("B1 allows up to the limit and remaining counts down to 0")
        void allowsUpToTheLimit() {
            String user = user("b1");
            for (int expected = 9; expected >= 0; expected--) {
                Decision decision = limiter.check(user, 10, MINUTE);
                assertThat(decision.allowed())
                        .as("[B1] check %d of a 10-limit window must be allowed", 10 - expected)
                        .isTrue();
                assertThat(decision.remaining())
                        .as("[B1] remaining after check %d of 10", 10 - expected)
                        .isEqualTo(expected);
                assertThat(decision.limit()).as("[B1] limit").isEqualTo(10);
                assertThat(decision.retryAfter())
                        .as("[B1] an allowed check has no retry")
                        .isZero();
                assertThat(decision.retryAfterSeconds()).isZero();
                assertThat(decision.degraded()).as("[B1] degraded").isFalse();
            }
        }

        @Test
        @DisplayName("B2 rejects past the limit with remaining 0 and a positive retry")
        void rejectsPastTheLimit() {
            String user = user("b2");
            assertThat(allowedOf(3, user, 3, MINUTE)).isEqualTo(3);
            Decision decision = limiter.check(user, 3, MINUTE);
            assertThat(decision.allowed())
                    .as("[B2] the check past the limit must be rejected")
                    .isFalse();
            assertThat(decision.remaining()).as("[B2] remaining on rejection").isZero();
            assertThat(decision.window().length()).as("[B2] rejecting window").isEqualTo(MINUTE);
            assertThat(decision.retryAfter()).as("[B2] retryAfter").isPositive();
            assertThat(decision.retryAfterSeconds())
                    .as("[B2] retryAfterSeconds")
                    .isBetween(1L, 60L);
        }

        @Test
        @DisplayName("B3 distinct user ids never share a budget, whatever characters they hold")
        void distinctUsersNeverShare() {
            List<String> ids = List.of(
                    "a",
                    "a:60",
                    "a:b",
                    "a:b:60",
                    "{a}",
                    "{a}b}",
                    "{a",
                    "a}",
                    "}{",
                    "a b",
                    " a",
                    "a ",
                    "ünï-cødé-用户-🙂",
                    "ratelimit:a:60",
                    "x".repeat(10_000),
                    "x".repeat(10_001));
            for (String id : ids) {
                String user = user(id);
                assertThat(limiter.check(user, 1, MINUTE).allowed())
                        .as("[B3] first check of user '%s' must be allowed: its budget is its own", abbreviate(id))
                        .isTrue();
            }
            for (String id : ids) {
                assertThat(limiter.check(user(id), 1, MINUTE).allowed())
                        .as("[B3] second check of user '%s' must be rejected", abbreviate(id))
                        .isFalse();
            }
        }

        @Test
        @DisplayName("B4 windows of different lengths keep separate logs for one user")
        void windowLengthsAreSeparate() {
            String user = user("b4");
            assertThat(allowedOf(2, user, 2, MINUTE)).isEqualTo(2);
            assertThat(limiter.check(user, 2, MINUTE).allowed()).isFalse();
            assertThat(allowedOf(3, user, 2, HOUR))
                    .as("[B4] an hour window must not see the minute window's entries")
                    .isEqualTo(2);
        }

        @Test
        @DisplayName("B5 a rejected check records nothing")
        void rejectionRecordsNothing() {
            String user = user("b5");
            assertThat(limiter.check(user, 2, MINUTE).allowed()).isTrue(); // t0
            clock.advance(Duration.ofSeconds(10));
            assertThat(limiter.check(user, 2, MINUTE).allowed()).isTrue(); // t0 + 10 s
            for (int i = 0; i < 5; i++) {
                clock.advance(Duration.ofSeconds(5));
                assertThat(limiter.check(user, 2, MINUTE).allowed()).isFalse();
            }
            clock.set(START.plus(MINUTE)); // the t0 entry has left
            assertThat(allowedOf(3, user, 2, MINUTE))
                    .as("[B5] after the first entry leaves, exactly one slot is free: rejections must not be recorded")
                    .isEqualTo(1);
        }
    }

    /** Section S: the window slides; there is no fixed boundary. */
    @Nested
    @DisplayName("S: sliding window")
    class Sliding {

        @Test
        @DisplayName("S1 a burst straddling a fixed-window boundary is not let through twice")
        void straddlingBurst() {
            String user = user("s1");
            clock.set(START.plusSeconds(59));
            assertThat(allowedOf(5, user, 5, MINUTE)).isEqualTo(5);
            clock.set(START.plusSeconds(61)); // past the minute boundary a fixed window resets at
            assertThat(allowedOf(5, user, 5, MINUTE))
                    .as("[S1] 2 s after a full burst, across a minute boundary, nothing more may pass")
                    .isZero();
            clock.set(START.plusSeconds(119));
            assertThat(allowedOf(6, user, 5, MINUTE))
                    .as("[S1] one window after the burst, the whole budget is back")
                    .isEqualTo(5);
        }

        @Test
        @DisplayName("S2 an entry leaves exactly one window length after it was recorded")
        void entryLeavesAfterExactlyOneWindow() {
            String user = user("s2");
            assertThat(limiter.check(user, 1, MINUTE).allowed()).isTrue();
            clock.advance(MINUTE.minusMillis(1));
            assertThat(limiter.check(user, 1, MINUTE).allowed())
                    .as("[S2] 1 ms before the entry leaves, the window is still full")
                    .isFalse();
            clock.advanceMillis(1);
            assertThat(limiter.check(user, 1, MINUTE).allowed())
                    .as("[S2] exactly one window length later the entry has left")
                    .isTrue();
        }

        @Test
        @DisplayName("S3 the budget returns entry by entry as old entries leave")
        void budgetReturnsEntryByEntry() {
            String user = user("s3");
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.check(user, 3, MINUTE).allowed()).isTrue();
                clock.advance(Duration.ofSeconds(10));
            }
            clock.set(START.plus(MINUTE));
            assertThat(allowedOf(2, user, 3, MINUTE))
                    .as("[S3] when the first entry leaves, one slot opens")
                    .isEqualTo(1);
            clock.set(START.plus(MINUTE).plusSeconds(10));
            assertThat(allowedOf(2, user, 3, MINUTE))
                    .as("[S3] when the second entry leaves, one more slot opens")
                    .isEqualTo(1);
        }
    }

    /** Section R: honest retry and reset times. */
    @Nested
    @DisplayName("R: retry-after")
    class RetryAfter {

        @Test
        @DisplayName("R1 retryAfter is the time until the oldest entry leaves, to the millisecond")
        void retryAfterToTheMillisecond() {
            String user = user("r1");
            clock.advanceMillis(1_000);
            assertThat(limiter.check(user, 2, MINUTE).allowed()).isTrue(); // t = 1 000
            clock.advanceMillis(1_234);
            assertThat(limiter.check(user, 2, MINUTE).allowed()).isTrue(); // t = 2 234
            clock.advanceMillis(3_087);
            Decision decision = limiter.check(user, 2, MINUTE); // t = 5 321
            assertThat(decision.allowed()).isFalse();
            assertThat(decision.retryAfter())
                    .as("[R1] retryAfter = oldest (1 000) + 60 000 - now (5 321)")
                    .isEqualTo(Duration.ofMillis(55_679));
            assertThat(decision.resetAfter()).as("[R1] resetAfter on rejection").isEqualTo(decision.retryAfter());
        }

        @Test
        @DisplayName("R2 retryAfterSeconds rounds up to whole seconds, at least 1")
        void retryAfterSecondsRoundsUp() {
            String user = user("r2");
            assertThat(limiter.check(user, 1, MINUTE).allowed()).isTrue();
            clock.advanceMillis(4_999);
            Decision decision = limiter.check(user, 1, MINUTE);
            assertThat(decision.retryAfter()).as("[R2] retryAfter").isEqualTo(Duration.ofMillis(55_001));
            assertThat(decision.retryAfterSeconds())
                    .as("[R2] 55.001 s rounds up")
                    .isEqualTo(56);
            clock.set(START.plus(MINUTE).minusMillis(1));
            Decision last = limiter.check(user, 1, MINUTE);
            assertThat(last.retryAfter()).isEqualTo(Duration.ofMillis(1));
            assertThat(last.retryAfterSeconds())
                    .as("[R2] 1 ms rounds up to 1 s")
                    .isEqualTo(1);
        }

        @Test
        @DisplayName("R3 a retry after exactly retryAfter succeeds, one millisecond earlier it fails")
        void retryAfterIsExact() {
            String user = user("r3");
            assertThat(allowedOf(4, user, 4, MINUTE)).isEqualTo(4);
            clock.advanceMillis(12_345);
            Decision rejected = limiter.check(user, 4, MINUTE);
            assertThat(rejected.allowed()).isFalse();
            clock.advance(rejected.retryAfter().minusMillis(1));
            assertThat(limiter.check(user, 4, MINUTE).allowed())
                    .as("[R3] 1 ms before retryAfter")
                    .isFalse();
            clock.advanceMillis(1);
            assertThat(limiter.check(user, 4, MINUTE).allowed())
                    .as("[R3] at retryAfter")
                    .isTrue();
        }

        @Test
        @DisplayName("R4 an allowed decision's resetAfter is the time until its window's oldest entry leaves")
        void resetAfterOnSuccess() {
            String user = user("r4");
            assertThat(limiter.check(user, 5, MINUTE).resetAfter()).isEqualTo(MINUTE);
            clock.advanceMillis(20_500);
            Decision second = limiter.check(user, 5, MINUTE);
            assertThat(second.resetAfter())
                    .as("[R4] oldest entry at t0 leaves at t0 + 60 s; now is t0 + 20.5 s")
                    .isEqualTo(Duration.ofMillis(39_500));
            assertThat(second.resetAfterSeconds()).isEqualTo(40);
        }
    }

    /** Section M: several windows, shortest first, all or nothing. */
    @Nested
    @DisplayName("M: multiple windows")
    class MultipleWindows {

        private final Window minute = window("minute", 5, MINUTE);
        private final Window day = window("day", 3, DAY);

        @Test
        @DisplayName("M1 a rejection by a longer window records nothing in the shorter ones")
        void allOrNothing() {
            String user = user("m1");
            List<Window> windows = List.of(minute, day);
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.check(user, windows).allowed()).isTrue();
            }
            for (int i = 0; i < 4; i++) {
                Decision decision = limiter.check(user, windows);
                assertThat(decision.allowed()).isFalse();
                assertThat(decision.window()).as("[M1] the day window rejects").isEqualTo(day);
            }
            assertThat(allowedOf(5, user, 5, MINUTE))
                    .as("[M1] the minute window holds exactly the 3 allowed requests: 2 slots left. A store that"
                            + " records in the minute window when the day window rejects leaves fewer")
                    .isEqualTo(2);
        }

        @Test
        @DisplayName("M2 when several windows are full, the shortest rejects")
        void shortestFirst() {
            String user = user("m2");
            List<Window> windows = List.of(window("minute", 2, MINUTE), window("hour", 2, HOUR));
            assertThat(limiter.check(user, windows).allowed()).isTrue();
            assertThat(limiter.check(user, windows).allowed()).isTrue();
            Decision decision = limiter.check(user, windows);
            assertThat(decision.allowed()).isFalse();
            assertThat(decision.window().name()).as("[M2] rejecting window").isEqualTo("minute");
            assertThat(decision.retryAfter())
                    .as("[M2] retry from the minute window")
                    .isEqualTo(MINUTE);
        }

        @Test
        @DisplayName("M3 a rejection by a longer window names it and gives its exact retry")
        void longerWindowRejects() {
            String user = user("m3");
            List<Window> windows = List.of(minute, day);
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.check(user, windows).allowed()).isTrue();
                clock.advance(HOUR);
            }
            Decision decision = limiter.check(user, windows); // now = t0 + 3 h
            assertThat(decision.allowed()).isFalse();
            assertThat(decision.window()).as("[M3] rejecting window").isEqualTo(day);
            assertThat(decision.limit()).isEqualTo(3);
            assertThat(decision.retryAfter())
                    .as("[M3] the day window's oldest entry (t0) leaves at t0 + 24 h")
                    .isEqualTo(Duration.ofHours(21));
        }

        @Test
        @DisplayName("M4 an allowed decision names the window with the least remaining, ties to the shortest")
        void decidingWindowOnSuccess() {
            String user = user("m4");
            List<Window> windows = List.of(window("minute", 3, MINUTE), window("hour", 5, HOUR));
            Decision first = limiter.check(user, windows); // minute 2 left, hour 4 left
            assertThat(first.window().name()).as("[M4] least remaining").isEqualTo("minute");
            assertThat(first.remaining()).isEqualTo(2);
            clock.advance(MINUTE.plusSeconds(1));
            limiter.check(user, windows); // minute 2 left, hour 3 left
            clock.advance(MINUTE.plusSeconds(1));
            limiter.check(user, windows); // minute 2 left, hour 2 left: tie
            Decision tie = limiter.check(user, windows); // minute 1 left, hour 1 left: tie
            assertThat(tie.window().name())
                    .as("[M4] ties go to the shortest window")
                    .isEqualTo("minute");
            assertThat(tie.remaining()).isEqualTo(1);
            clock.advance(MINUTE.plusSeconds(1));
            Decision hour = limiter.check(user, windows); // minute 2 left, hour 0 left
            assertThat(hour.window().name()).as("[M4] least remaining").isEqualTo("hour");
            assertThat(hour.remaining()).isZero();
            assertThat(hour.allowed()).isTrue();
        }

        @Test
        @DisplayName("M5 the order windows are given in does not matter")
        void orderDoesNotMatter() {
            String user = user("m5");
            List<Window> reversed = List.of(day, minute);
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.check(user, reversed).allowed()).isTrue();
            }
            Decision decision = limiter.check(user, reversed);
            assertThat(decision.allowed()).isFalse();
            assertThat(decision.window()).isEqualTo(day);
            assertThat(allowedOf(5, user, 5, MINUTE)).as("[M5]").isEqualTo(2);
        }

        @Test
        @DisplayName("M6 a tier check applies the tier's windows")
        void tierCheck() {
            String user = user("m6");
            Tier tier = new Tier("tiny", List.of(window("minute", 2, MINUTE), window("day", 10, DAY)));
            assertThat(limiter.check(user, tier).allowed()).isTrue();
            assertThat(limiter.check(user, tier).allowed()).isTrue();
            Decision decision = limiter.check(user, tier);
            assertThat(decision.allowed()).as("[M6]").isFalse();
            assertThat(decision.window().name()).isEqualTo("minute");
        }
    }

    /** Section C: exact under concurrency. */
    @Nested
    @DisplayName("C: concurrency")
    class Concurrency {

        @Test
        @DisplayName("C1 20 simultaneous checks on a limit of 10 allow exactly 10, and 10 more a window later")
        @Timeout(value = 120, unit = TimeUnit.SECONDS)
        void twentyThreads() throws Exception {
            for (int trial = 0; trial < concurrencyTrials(); trial++) {
                String user = user("c1-" + trial);
                assertThat(race(20, () -> limiter.check(user, 10, MINUTE)))
                        .as("[C1] trial %d: allowed of 20 simultaneous checks, limit 10", trial)
                        .isEqualTo(10);
                clock.advance(Duration.ofSeconds(61));
                assertThat(race(20, () -> limiter.check(user, 10, MINUTE)))
                        .as("[C1] trial %d: allowed of 20 simultaneous checks 61 s later", trial)
                        .isEqualTo(10);
            }
        }

        @Test
        @DisplayName("C2 200 simultaneous checks on a limit of 50 allow exactly 50")
        @Timeout(value = 120, unit = TimeUnit.SECONDS)
        void twoHundredThreads() throws Exception {
            String user = user("c2");
            assertThat(race(200, () -> limiter.check(user, 50, MINUTE)))
                    .as("[C2] allowed of 200 simultaneous checks, limit 50")
                    .isEqualTo(50);
        }

        @Test
        @DisplayName("C3 500 asynchronous checks in flight on a limit of 100 allow exactly 100")
        @Timeout(value = 120, unit = TimeUnit.SECONDS)
        void fiveHundredAsync() {
            String user = user("c3");
            List<CompletableFuture<Decision>> futures = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                futures.add(limiter.checkAsync(user, 100, MINUTE).toCompletableFuture());
            }
            long allowed = futures.stream()
                    .map(CompletableFuture::join)
                    .filter(Decision::allowed)
                    .count();
            assertThat(allowed)
                    .as("[C3] allowed of 500 asynchronous checks, limit 100")
                    .isEqualTo(100);
        }

        @Test
        @DisplayName("C4 all or nothing holds under contention across two windows")
        @Timeout(value = 120, unit = TimeUnit.SECONDS)
        void allOrNothingUnderContention() throws Exception {
            String user = user("c4");
            List<Window> windows = List.of(window("minute", 10, MINUTE), window("day", 15, DAY));
            assertThat(race(50, () -> limiter.check(user, windows)))
                    .as("[C4] first minute: the minute window caps")
                    .isEqualTo(10);
            clock.advance(Duration.ofSeconds(61));
            assertThat(race(50, () -> limiter.check(user, windows)))
                    .as("[C4] second minute: the day window caps at 15 in all")
                    .isEqualTo(5);
            assertThat(allowedOf(20, user, 10, MINUTE))
                    .as("[C4] the minute window holds only the 5 allowed requests of this minute")
                    .isEqualTo(5);
        }

        private int race(int threads, java.util.concurrent.Callable<Decision> check) throws Exception {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                CountDownLatch ready = new CountDownLatch(threads);
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Decision>> results = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    results.add(pool.submit(() -> {
                        ready.countDown();
                        go.await();
                        return check.call();
                    }));
                }
                assertThat(ready.await(30, TimeUnit.SECONDS)).isTrue();
                go.countDown();
                int allowed = 0;
                for (Future<Decision> result : results) {
                    if (result.get(60, TimeUnit.SECONDS).allowed()) {
                        allowed++;
                    }
                }
                return allowed;
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** Section I: bad input fails fast, naming the argument, before any store I/O. */
    @Nested
    @DisplayName("I: input validation")
    class InputValidation {

        @Test
        @DisplayName("I1 a null or empty user id is refused before the store is called")
        void badUser() {
            expectRefused(() -> limiter.check(null, 5, MINUTE), NullPointerException.class, "userId");
            expectRefused(() -> limiter.check("", 5, MINUTE), IllegalArgumentException.class, "userId");
            expectRefused(() -> limiter.checkAsync("", 5, MINUTE), IllegalArgumentException.class, "userId");
        }

        @Test
        @DisplayName("I2 a limit below 1 is refused before the store is called")
        void badLimit() {
            expectRefused(() -> limiter.check(user("i2"), 0, MINUTE), IllegalArgumentException.class, "limit");
            expectRefused(() -> limiter.check(user("i2"), -1, MINUTE), IllegalArgumentException.class, "limit");
        }

        @Test
        @DisplayName("I3 a null, zero, negative, sub-second or fractional window is refused before the store is called")
        void badWindow() {
            String user = user("i3");
            expectRefused(() -> limiter.check(user, 5, null), NullPointerException.class, "window");
            expectRefused(() -> limiter.check(user, 5, Duration.ZERO), IllegalArgumentException.class, "window");
            expectRefused(
                    () -> limiter.check(user, 5, Duration.ofSeconds(-1)), IllegalArgumentException.class, "window");
            expectRefused(
                    () -> limiter.check(user, 5, Duration.ofMillis(500)), IllegalArgumentException.class, "window");
            expectRefused(
                    () -> limiter.check(user, 5, Duration.ofMillis(1_500)), IllegalArgumentException.class, "window");
        }

        @Test
        @DisplayName(
                "I4 a null or empty window list, or two windows of one length, is refused before the store is called")
        void badWindowList() {
            String user = user("i4");
            expectRefused(() -> limiter.check(user, (List<Window>) null), NullPointerException.class, "windows");
            expectRefused(() -> limiter.check(user, List.of()), IllegalArgumentException.class, "windows");
            expectRefused(
                    () -> limiter.check(user, List.of(window("a", 1, MINUTE), window("b", 2, MINUTE))),
                    IllegalArgumentException.class,
                    "windows");
            expectRefused(() -> limiter.check(user, (Tier) null), NullPointerException.class, "tier");
        }

        private void expectRefused(ThrowingCallable call, Class<? extends Throwable> type, String argument) {
            int before = counting.calls();
            assertThatThrownBy(call)
                    .as("[I] expected %s naming '%s'", type.getSimpleName(), argument)
                    .isInstanceOf(type)
                    .hasMessageContaining(argument);
            assertThat(counting.calls()).as("[I] the store must not be called").isEqualTo(before);
        }
    }

    /** Section K: the kill switch. */
    @Nested
    @DisplayName("K: kill switch")
    class KillSwitch {

        @Test
        @DisplayName("K1 a disabled limiter allows everything with the full budget and never touches the store")
        void disabledLimiter() {
            RateLimiter disabled = limiterFor(counting, true);
            String user = user("k1");
            for (int i = 0; i < 20; i++) {
                Decision decision = disabled.check(user, 1, MINUTE);
                assertThat(decision.allowed()).as("[K1] allowed").isTrue();
                assertThat(decision.remaining()).as("[K1] remaining == limit").isEqualTo(1);
                assertThat(decision.retryAfterSeconds()).isZero();
                assertThat(disabled.checkAsync(user, 1, MINUTE)
                                .toCompletableFuture()
                                .join()
                                .allowed())
                        .isTrue();
            }
            assertThat(counting.calls()).as("[K1] store calls").isZero();
        }
    }

    /** Section T: the store's own clock. */
    @Nested
    @DisplayName("T: store time")
    class StoreTime {

        @Test
        @DisplayName("T1 without an injected clock the store's own time counts and rejects")
        void storeClock() {
            RateLimiter ownTime =
                    SlidingWindowRateLimiter.builder(store).failOpen(false).build();
            String user = user("t1");
            for (int i = 0; i < 3; i++) {
                assertThat(ownTime.check(user, 3, MINUTE).allowed()).as("[T1]").isTrue();
            }
            Decision rejected = ownTime.check(user, 3, MINUTE);
            assertThat(rejected.allowed()).as("[T1]").isFalse();
            assertThat(rejected.retryAfter()).as("[T1]").isPositive().isLessThanOrEqualTo(MINUTE);
        }
    }

    /** Section W: requests that take several permits (token budgets), through the port directly. */
    @Nested
    @DisplayName("W: weighted requests")
    class Weighted {

        private final Window minute = window("minute", 10, MINUTE);

        private Evaluation take(String user, int permits) {
            return store.evaluate(new StoreRequest(user, List.of(minute), permits, clock.millis()));
        }

        @Test
        @DisplayName("W1 a request of k permits counts k in every window, all or nothing")
        void permitsCount() {
            String user = user("w1");
            Evaluation first = take(user, 4);
            assertThat(first.isAllowed()).as("[W1] 4 of 10").isTrue();
            assertThat(first.used(0)).as("[W1] used after 4 permits").isEqualTo(4);
            clock.advance(Duration.ofSeconds(10));
            assertThat(take(user, 4).used(0)).as("[W1] used after 8 permits").isEqualTo(8);
            clock.advance(Duration.ofSeconds(10));
            Evaluation rejected = take(user, 4);
            assertThat(rejected.isAllowed()).as("[W1] 8 + 4 > 10").isFalse();
            assertThat(rejected.used(0)).as("[W1] a rejection records nothing").isEqualTo(8);
            assertThat(take(user, 2).used(0)).as("[W1] 8 + 2 fits exactly").isEqualTo(10);
        }

        @Test
        @DisplayName("W2 a weighted rejection's retry is when enough permits leave, not just the oldest")
        void weightedRetry() {
            String user = user("w2");
            assertThat(take(user, 2).isAllowed()).isTrue(); // t0: 2
            clock.advance(Duration.ofSeconds(10));
            assertThat(take(user, 6).isAllowed()).isTrue(); // t0 + 10 s: 6 more, 8 in all
            clock.advance(Duration.ofSeconds(10));
            Evaluation rejected = take(user, 5); // needs 3 to leave: both t0 entries and one of t0 + 10 s
            assertThat(rejected.isAllowed()).isFalse();
            assertThat(rejected.resetAfterMillis(0))
                    .as("[W2] room for 5 returns when the t0 + 10 s entries leave, 50 s from now")
                    .isEqualTo(50_000);
            clock.advance(Duration.ofSeconds(50));
            assertThat(take(user, 5).isAllowed()).as("[W2] at the retry time").isTrue();
        }

        @Test
        @DisplayName("W3 a request of more permits than the limit is rejected and records nothing")
        void morePermitsThanTheLimit() {
            String user = user("w3");
            Evaluation rejected = take(user, 11);
            assertThat(rejected.isAllowed()).as("[W3] 11 of 10").isFalse();
            assertThat(rejected.used(0)).isZero();
            assertThat(take(user, 10).isAllowed())
                    .as("[W3] the budget is intact")
                    .isTrue();
        }
    }

    /** Section G: budgets shared by many users, charged in the same atomic step (optional). */
    @Nested
    @DisplayName("G: shared scopes")
    class SharedScopes {

        private final Window userMinute = window("minute", 5, MINUTE);
        private final Window sharedMinute = window("minute", 3, MINUTE);

        private StoreRequest request(String user, String shared) {
            return new StoreRequest(
                    List.of(
                            new StoreRequest.Scope(user, List.of(userMinute)),
                            new StoreRequest.Scope(shared, List.of(sharedMinute))),
                    1,
                    clock.millis());
        }

        @Test
        @DisplayName("G0 a store without shared scopes refuses them instead of evaluating piecewise")
        void refusedWhenUnsupported() {
            assumeTrue(!supportsSharedScopes(), "the store supports shared scopes: G1 and G2 apply");
            assertThatThrownBy(() -> store.evaluate(request(user("g0"), user("g0-shared"))))
                    .as("[G0]")
                    .isInstanceOf(UnsupportedOperationException.class);
        }

        @Test
        @DisplayName("G1 a shared budget caps all its users, and its rejection charges nobody")
        void sharedBudgetCaps() {
            assumeTrue(supportsSharedScopes(), "the store does not declare shared scopes");
            String shared = user("g1-upstream");
            String alice = user("g1-alice");
            String bob = user("g1-bob");
            assertThat(store.evaluate(request(alice, shared)).isAllowed()).isTrue();
            assertThat(store.evaluate(request(alice, shared)).isAllowed()).isTrue();
            Evaluation bobFirst = store.evaluate(request(bob, shared));
            assertThat(bobFirst.isAllowed()).isTrue();
            assertThat(bobFirst.used(1))
                    .as("[G1] the shared window counts every user")
                    .isEqualTo(3);
            Evaluation rejected = store.evaluate(request(bob, shared));
            assertThat(rejected.isAllowed())
                    .as("[G1] the shared budget of 3 is used up")
                    .isFalse();
            assertThat(rejected.rejectedIndex())
                    .as("[G1] rejected by the shared window")
                    .isEqualTo(1);
            Evaluation bobAlone = store.evaluate(new StoreRequest(bob, List.of(userMinute), 1, clock.millis()));
            assertThat(bobAlone.used(0))
                    .as("[G1] bob's own window holds only his allowed request")
                    .isEqualTo(2);
        }

        @Test
        @DisplayName("G2 shared budgets stay exact under contention")
        @Timeout(value = 120, unit = TimeUnit.SECONDS)
        void sharedUnderContention() throws Exception {
            assumeTrue(supportsSharedScopes(), "the store does not declare shared scopes");
            String shared = user("g2-upstream");
            int threads = 30;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Evaluation>> results = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    String user = user("g2-user-" + (i % 10));
                    results.add(pool.submit(() -> {
                        go.await();
                        return store.evaluate(request(user, shared));
                    }));
                }
                go.countDown();
                int allowed = 0;
                for (Future<Evaluation> result : results) {
                    if (result.get(60, TimeUnit.SECONDS).isAllowed()) {
                        allowed++;
                    }
                }
                assertThat(allowed)
                        .as("[G2] allowed of 30 simultaneous checks, shared limit 3")
                        .isEqualTo(3);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** Section E: optional, real expiry of idle state. */
    @Nested
    @DisplayName("E: real expiry (optional)")
    class RealExpiry {

        @Test
        @DisplayName(
                "E1 an idle user's state outlives its window, and is dropped after its longest window plus one second")
        @Timeout(value = 30, unit = TimeUnit.SECONDS)
        void idleStateExpires() throws InterruptedException {
            assumeTrue(supportsRealExpiry(), "the store does not declare real expiry");
            RateLimiter ownTime =
                    SlidingWindowRateLimiter.builder(store).failOpen(false).build();
            String user = user("e1");
            Duration second = Duration.ofSeconds(1);
            assertThat(ownTime.check(user, 1, second).allowed()).isTrue();
            assertThat(holdsStateFor(store, user, second))
                    .as("[E1] state right after a check")
                    .isTrue();
            Thread.sleep(700);
            assertThat(holdsStateFor(store, user, second))
                    .as("[E1] state 0.7 s after a check: it must outlive its window")
                    .isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (holdsStateFor(store, user, second) && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(holdsStateFor(store, user, second))
                    .as("[E1] state 10 s after the last check of a 1 s window")
                    .isFalse();
            assertThat(ownTime.check(user, 1, second).allowed())
                    .as("[E1] allowed again")
                    .isTrue();
        }
    }

    private static String abbreviate(String id) {
        return id.length() > 40 ? id.substring(0, 20) + "…(" + id.length() + " chars)" : id;
    }
}
